package gitfixture

import (
	"fmt"
	"strings"
)

// Fleet is a Flux repository laid out as home labs lay theirs out: one cluster
// (clusters/main, the root Flux applies), cluster-wide variables (a ConfigMap and a
// SOPS-encrypted Secret that every app's Kustomization substitutes from), a shared
// chart and a shared kustomize component, and Namespaces x AppsPerNamespace apps,
// each a namespace directory's ks.yaml (a Flux Kustomization) over its app/
// directory. Even apps are HelmReleases of the shared chart; odd ones plain
// manifests; every fifth also holds a SOPS-encrypted Secret.
type Fleet struct {
	Namespaces, AppsPerNamespace int
	// Only keeps a single app ("ns-03/app-034"): the same repository holding that app
	// alone, to measure a change to it beside the whole fleet's.
	Only string
	// Seal encrypts a Secret document with SOPS (nil: the fleet has no SOPS files).
	Seal func(plain []byte) ([]byte, error)
}

// Apps are the fleet's apps, "ns-NN/app-MMM" (MMM numbers the apps of the whole
// fleet: app names are unique, as Flux needs its Kustomizations' to be), in order.
func (f Fleet) Apps() []string {
	var out []string
	for n := 0; n < f.Namespaces; n++ {
		for a := 0; a < f.AppsPerNamespace; a++ {
			app := fmt.Sprintf("ns-%02d/app-%03d", n, n*f.AppsPerNamespace+a)
			if f.Only == "" || f.Only == app {
				out = append(out, app)
			}
		}
	}
	return out
}

// Files are the fleet's files at its first commit.
func (f Fleet) Files() (map[string]string, error) {
	files := map[string]string{
		"clusters/main/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 1h
  url: https://git.example.com/fleet.git
  ref: {branch: main}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 1h
  path: ./clusters/main
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
		"clusters/main/flux-system/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [gotk-sync.yaml]\n",
		"clusters/main/vars.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-vars, namespace: flux-system}
spec:
  interval: 1h
  path: ./clusters/main/vars
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  decryption: {provider: sops}
`,
		"clusters/main/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec:
  interval: 1h
  path: ./apps
  prune: true
  dependsOn: [{name: cluster-vars}]
  sourceRef: {kind: GitRepository, name: flux-system}
`,
		"clusters/main/vars/cluster-settings.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-settings, namespace: flux-system}
data:
  CLUSTER_NAME: main
  TIMEZONE: Etc/UTC
`,
		"charts/app/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 1.0.0\n",
		"charts/app/values.yaml": "image: {repository: ghcr.io/example/app, tag: \"1.0.0\"}\nreplicas: 1\nport: 8080\nenv: {}\n",
		"charts/app/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app.kubernetes.io/name: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app.kubernetes.io/name: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: {{ .Release.Name }}}
    spec:
      containers:
      - name: app
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        ports: [{containerPort: {{ .Values.port }}}]
        {{- with .Values.env }}
        env:
        {{- range $k, $v := . }}
        - {name: {{ $k }}, value: {{ $v | quote }}}
        {{- end }}
        {{- end }}
`,
		"charts/app/templates/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}}
spec:
  selector: {app.kubernetes.io/name: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: {{ .Values.port }}}]
`,
		"components/common/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
labels:
- pairs: {app.kubernetes.io/part-of: fleet}
`,
	}
	vars := []string{"cluster-settings.yaml"}
	if f.Seal != nil {
		sealed, err := f.Seal([]byte("apiVersion: v1\nkind: Secret\nmetadata: {name: cluster-secrets, namespace: flux-system}\nstringData:\n  SECRET_DOMAIN: lab.example.net\n"))
		if err != nil {
			return nil, err
		}
		files["clusters/main/vars/cluster-secrets.sops.yaml"] = string(sealed)
		vars = append(vars, "cluster-secrets.sops.yaml")
	}
	files["clusters/main/vars/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [" + strings.Join(vars, ", ") + "]\n"

	byNamespace := map[string][]string{}
	var namespaces []string
	for _, app := range f.Apps() {
		ns, name, _ := strings.Cut(app, "/")
		if byNamespace[ns] == nil {
			namespaces = append(namespaces, ns)
		}
		byNamespace[ns] = append(byNamespace[ns], name)
		if err := f.app(files, app, 0); err != nil {
			return nil, err
		}
	}
	files["apps/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n" + list(namespaces, "./%s") + ""
	for _, ns := range namespaces {
		files["apps/"+ns+"/namespace.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
		files["apps/"+ns+"/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ./namespace.yaml\n" + list(byNamespace[ns], "./%s/ks.yaml")
	}
	return files, nil
}

// list is a YAML list of items, each formatted with format.
func list(items []string, format string) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- "+format+"\n", it)
	}
	return b.String()
}

// Edit is the files of one commit changing one app: its n-th revision (n > 0) of
// what the app holds (a HelmRelease's values, a plain app's ConfigMap) and, when
// secret is true, of its SOPS Secret (an app holding one: HasSecret).
func (f Fleet) Edit(app string, n int, secret bool) (map[string]string, error) {
	files := map[string]string{}
	if secret {
		if !f.HasSecret(app) || f.Seal == nil {
			return nil, fmt.Errorf("app %s holds no SOPS Secret", app)
		}
		return files, f.secret(files, app, n)
	}
	return files, f.app(files, app, n)
}

// index is an app's number in the fleet.
func (f Fleet) index(app string) int {
	var n, a int
	fmt.Sscanf(app, "ns-%d/app-%d", &n, &a)
	return a
}

// IsHelm says whether app is a HelmRelease (else plain manifests).
func (f Fleet) IsHelm(app string) bool { return f.index(app)%2 == 0 }

// HasSecret says whether app holds a SOPS-encrypted Secret.
func (f Fleet) HasSecret(app string) bool { return f.Seal != nil && f.index(app)%5 == 0 }

// app writes app's files at revision rev.
func (f Fleet) app(files map[string]string, app string, rev int) error {
	ns, name, _ := strings.Cut(app, "/")
	dir := "apps/" + app + "/"
	files[dir+"ks.yaml"] = fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %[2]s, namespace: flux-system}
spec:
  interval: 1h
  path: ./apps/%[1]s/%[2]s/app
  targetNamespace: %[1]s
  prune: true
  wait: false
  sourceRef: {kind: GitRepository, name: flux-system}
  decryption: {provider: sops}
  postBuild:
    substitute: {APP: %[2]s}
    substituteFrom:
    - {kind: ConfigMap, name: cluster-settings}
    - {kind: Secret, name: cluster-secrets, optional: true}
`, ns, name)
	resources := []string{}
	if f.IsHelm(app) {
		resources = append(resources, "helmrelease.yaml")
		files[dir+"app/helmrelease.yaml"] = fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: %s}
spec:
  interval: 1h
  chart:
    spec:
      chart: ./charts/app
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  values:
    replicas: %d
    image: {tag: "1.%d.0"}
    env:
      TZ: ${TIMEZONE}
      CLUSTER: ${CLUSTER_NAME}
`, name, 1+rev%3, rev)
	} else {
		resources = append(resources, "deployment.yaml", "configmap.yaml")
		files[dir+"app/deployment.yaml"] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${APP}
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${APP}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${APP}
    spec:
      containers:
      - name: app
        image: ghcr.io/example/%s:1.0.0
        envFrom:
        - configMapRef:
            name: ${APP}-config
`, name)
		files[dir+"app/configmap.yaml"] = fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: ${APP}-config
data:
  LOG_LEVEL: info
  REVISION: "%d"
  TZ: ${TIMEZONE}
`, rev)
	}
	if f.HasSecret(app) {
		resources = append(resources, "secret.sops.yaml")
		if rev == 0 {
			if err := f.secret(files, app, 0); err != nil {
				return err
			}
		}
	}
	files[dir+"app/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n" + list(resources, "./%s") +
		"components:\n- ../../../../components/common\n"
	return nil
}

// secret writes app's SOPS Secret at revision rev.
func (f Fleet) secret(files map[string]string, app string, rev int) error {
	_, name, _ := strings.Cut(app, "/")
	sealed, err := f.Seal(fmt.Appendf(nil, "apiVersion: v1\nkind: Secret\nmetadata: {name: %s-secret}\nstringData:\n  PASSWORD: password-%d\n", name, rev))
	if err != nil {
		return err
	}
	files["apps/"+app+"/app/secret.sops.yaml"] = string(sealed)
	return nil
}
