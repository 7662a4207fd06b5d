package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drift-gitops/drift/internal/ephemeral"
	"github.com/drift-gitops/drift/internal/gitfixture"
	"github.com/drift-gitops/drift/internal/kube"
)

// touch edits n ConfigMaps of the cluster, as someone editing them by hand would (an
// annotation, by another field manager, so no apply conflicts): their answers in the
// dry-run cache no longer match, and the next run sends them again. run makes each
// round's edit new.
func touch(srv *ephemeral.Server, n, perKind, run int) error {
	clients, err := kube.NewClients(srv.Config, 8)
	if err != nil {
		return err
	}
	cms := clients.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"bench.drift.dev/edited":"round-%d"}}}`, run))
	done := 0
	for k := 0; k < perKind && done < n; k++ {
		for ns := 0; ns < namespaces && done < n; ns++ {
			_, err := cms.Namespace(fmt.Sprintf("bench-%02d", ns)).Patch(context.Background(), fmt.Sprintf("configmap-%03d", k),
				types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "bench-edit"})
			if apierrors.IsNotFound(err) {
				continue // added by the head commit: not in the cluster
			}
			if err != nil {
				return err
			}
			done++
		}
	}
	if done < n {
		return fmt.Errorf("edited %d ConfigMaps, wanted %d", done, n)
	}
	return nil
}

// The fleet: an ApplicationSet whose matrix crosses 50 add-on directories with 20
// clusters, 1,000 Applications.
const (
	fleetAddons   = 50
	fleetClusters = 20
)

// benchFleet times drift targets over the fleet, with its add-ons written three
// ways: plain manifests, kustomizations, and Helm charts (each Application its own
// release, so each renders alone): discovery, the ApplicationSet's expansion in a
// render worker, following what each Application renders, and planning, with no
// cluster.
func benchFleet(drift string, runs int) error {
	fmt.Printf("\n== fleet: drift targets over %d Applications (%d add-ons x %d clusters, one ApplicationSet's matrix), no cluster\n", fleetAddons*fleetClusters, fleetAddons, fleetClusters)
	fmt.Printf("%-46s %11s %11s %10s %8s\n", "command", "median wall", "client CPU", "peak RSS", "targets")
	for _, kind := range []string{"plain", "kustomize", "helm"} {
		if err := benchFleetOf(drift, runs, kind); err != nil {
			return err
		}
	}
	return nil
}

// addon is one add-on's files, written as kind.
func addon(kind string, a int) map[string]string {
	dir := fmt.Sprintf("addons/addon-%02d/", a)
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: addon-%02d}\ndata: {enabled: \"true\"}\n", a)
	switch kind {
	case "kustomize":
		return map[string]string{dir + "configmap.yaml": cm, dir + "kustomization.yaml": fmt.Sprintf("resources: [configmap.yaml]\ncommonLabels: {addon: addon-%02d}\n", a)}
	case "helm":
		return map[string]string{
			dir + "Chart.yaml":        fmt.Sprintf("apiVersion: v2\nname: addon-%02d\nversion: 1.0.0\n", a),
			dir + "values.yaml":       "enabled: \"true\"\n",
			dir + "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\ndata: {enabled: {{ .Values.enabled | quote }}}\n",
		}
	}
	return map[string]string{dir + "configmap.yaml": cm}
}

func benchFleetOf(drift string, runs int, kind string) error {
	dir, err := os.MkdirTemp("", "drift-bench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r, err := gitfixture.Init(dir)
	if err != nil {
		return err
	}
	files := map[string]string{}
	var clusters, elements []string
	for c := 0; c < fleetClusters; c++ {
		name := fmt.Sprintf("cluster-%02d", c)
		clusters = append(clusters, fmt.Sprintf("  %s: ctx-%02d", name, c))
		elements = append(elements, fmt.Sprintf("          - {name: %s}", name))
	}
	files["drift.yaml"] = "discover: true\nrepoURLs: [https://git.example.com/fleet.git]\nclusters:\n" + strings.Join(clusters, "\n") + "\n"
	for a := 0; a < fleetAddons; a++ {
		maps.Copy(files, addon(kind, a))
	}
	files["appsets/addons.yaml"] = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: addons, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://git.example.com/fleet.git
          revision: HEAD
          directories:
          - path: addons/*
      - list:
          elements:
` + strings.Join(elements, "\n") + `
  template:
    metadata:
      name: '{{ .path.basename }}-{{ .name }}'
    spec:
      project: default
      source:
        repoURL: https://git.example.com/fleet.git
        targetRevision: HEAD
        path: '{{ .path.path }}'
      destination:
        name: '{{ .name }}'
        namespace: addons
`
	if _, err := r.CommitFiles(files, "fleet"); err != nil {
		return err
	}
	var walls, cpus []time.Duration
	var rss int64
	targets := 0
	for i := 0; i < runs; i++ {
		wall, cpu, maxrss, out, err := measure([]string{drift, "targets", "--repo", dir, "--ref", "main", "-o", "json"}, nil)
		if err != nil {
			return err
		}
		var rows []struct {
			Skipped string `json:"skipped"`
			Refused string `json:"refused"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			return fmt.Errorf("drift targets -o json: %w", err)
		}
		targets = 0
		for _, row := range rows {
			if row.Skipped == "" && row.Refused == "" {
				targets++
			}
		}
		walls, cpus, rss = append(walls, wall), append(cpus, cpu), max(rss, maxrss)
	}
	fmt.Printf("%-46s %10.2fs %10.2fs %6.0f MiB %8d\n", "drift targets, "+kind+" add-ons", median(walls).Seconds(), median(cpus).Seconds(), float64(rss)/1024, targets)
	return nil
}
