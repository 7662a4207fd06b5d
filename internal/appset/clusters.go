package appset

import (
	"encoding/base64"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The in-cluster the clusters generator adds when no cluster Secret names it.
const (
	inClusterName   = "in-cluster"
	inClusterServer = "https://kubernetes.default.svc"
	// secretTypeLabel marks an Argo CD cluster Secret; the generator selects on it.
	secretTypeLabel = "argocd.argoproj.io/secret-type"
)

// clusterSpec is a clusters generator's spec.
type clusterSpec struct {
	Selector metav1.LabelSelector `json:"selector"`
	Values   map[string]string    `json:"values"`
	FlatList bool                 `json:"flatList"`
}

// clusterParams are a clusters generator's parameter sets: one per cluster Secret
// its selector matches (by name: Secrets naming one cluster count once, the last
// given), in name order, then the in-cluster when the selector is empty and no
// matched Secret's server is https://kubernetes.default.svc. With flatList, one
// set {clusters: [...]}.
func (e *expander) clusterParams(v any) ([]map[string]any, error) {
	m, err := object(v, "clusters")
	if err != nil {
		return nil, err
	}
	var spec clusterSpec
	if err := decodeInto(m, &spec); err != nil {
		return nil, fmt.Errorf("clusters: %w", err)
	}
	if e.req.ClustersUnknown {
		return nil, skipf("reads Argo CD's cluster Secrets, and drift was given none to read")
	}
	ignoreLocal := len(spec.Selector.MatchLabels) > 0 || len(spec.Selector.MatchExpressions) > 0
	sel := metav1.AddLabelToSelector(spec.Selector.DeepCopy(), secretTypeLabel, "cluster")
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("error converting label selector: %w", err)
	}
	byName := map[string]Cluster{}
	for _, c := range e.req.Clusters {
		if err := e.ctx.Err(); err != nil {
			return nil, err
		}
		if selector.Matches(labels.Set(clusterLabels(c))) {
			byName[c.Name] = c
		}
	}
	r := e.renderer()
	var out []map[string]any
	hasInCluster := false
	for _, name := range sortedKeys(byName) {
		c := byName[name]
		if c.Server == inClusterServer {
			hasInCluster = true
		}
		params := clusterParameters(c, r.goTemplate)
		if err := r.appendValues(spec.Values, params); err != nil {
			return nil, fmt.Errorf("error appending templated values for cluster: %w", err)
		}
		out = append(out, params)
	}
	if !ignoreLocal && !hasInCluster {
		params := map[string]any{"name": inClusterName, "nameNormalized": inClusterName, "server": inClusterServer, "project": ""}
		if err := r.appendValues(spec.Values, params); err != nil {
			return nil, fmt.Errorf("error appending templated values for local cluster: %w", err)
		}
		out = append(out, params)
	}
	if spec.FlatList {
		list := make([]map[string]any, len(out))
		copy(list, out)
		return []map[string]any{{"clusters": list}}, nil
	}
	return out, nil
}

// clusterLabels are a cluster Secret's labels, the secret-type label included.
func clusterLabels(c Cluster) map[string]string {
	out := map[string]string{secretTypeLabel: "cluster"}
	for k, v := range c.Labels {
		out[k] = v
	}
	return out
}

// clusterParameters are one cluster's parameters: name, nameNormalized, server,
// project, and its labels and annotations (metadata.labels.<key> flat, or
// metadata.labels nested in goTemplate).
func clusterParameters(c Cluster, goTemplate bool) map[string]any {
	params := map[string]any{
		"name":           c.Name,
		"nameNormalized": sanitizeName(c.Name),
		"server":         c.Server,
		"project":        c.Project,
	}
	lbls := clusterLabels(c)
	if goTemplate {
		meta := map[string]any{}
		if len(c.Annotations) > 0 {
			annotations := make(map[string]string, len(c.Annotations))
			for k, v := range c.Annotations {
				annotations[k] = v
			}
			meta["annotations"] = annotations
		}
		meta["labels"] = lbls
		params["metadata"] = meta
		return params
	}
	for k, v := range c.Annotations {
		params["metadata.annotations."+k] = v
	}
	for k, v := range lbls {
		params["metadata.labels."+k] = v
	}
	return params
}

// SecretTypeLabel and ClusterSecretType mark an Argo CD cluster Secret.
const (
	SecretTypeLabel   = secretTypeLabel
	ClusterSecretType = "cluster"
)

// ClusterOf reads an Argo CD cluster Secret (a Secret labelled
// argocd.argoproj.io/secret-type: cluster) as the clusters generator does: its name,
// server and project from data (base64) or stringData, its labels and annotations.
// Its config (the credentials) is never read. ok is false for any other object.
func ClusterOf(secret map[string]any) (c Cluster, ok bool) {
	if k, _ := secret["kind"].(string); k != "Secret" {
		return c, false
	}
	md, _ := secret["metadata"].(map[string]any)
	labels := metadataStrings(md["labels"])
	if labels[secretTypeLabel] != ClusterSecretType {
		return c, false
	}
	field := func(key string) string {
		if sd, _ := secret["stringData"].(map[string]any); sd != nil {
			if v, ok := sd[key].(string); ok {
				return v
			}
		}
		if d, _ := secret["data"].(map[string]any); d != nil {
			if v, ok := d[key].(string); ok {
				if b, err := base64.StdEncoding.DecodeString(v); err == nil {
					return string(b)
				}
			}
		}
		return ""
	}
	c = Cluster{Name: field("name"), Server: field("server"), Project: field("project"), Labels: labels, Annotations: metadataStrings(md["annotations"])}
	return c, true
}

func metadataStrings(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}
