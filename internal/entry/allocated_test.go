package entry

import (
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/report/reporttest"
)

func service(meta, spec string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop" + meta + "}\nspec: {" + spec + "}\n"
}

func TestOnlyValuesTheServerAllocatesAreMarked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                   string
		rendered, live, merged string
		category               string
		want, notWant          []string
	}{
		{
			name:     "new Service: the dry run's cluster IPs",
			rendered: service("", "ports: [{port: 80}]"),
			merged:   service(", uid: u, creationTimestamp: '2026-01-01T00:00:00Z'", "clusterIP: 10.0.0.0, clusterIPs: [10.0.0.0], ports: [{port: 80}]"),
			category: report.Add,
			want:     []string{"+  clusterIP: (allocated)\n", "+  - (allocated)\n"},
			notWant:  []string{"10.0.0.0", "uid:", "creationTimestamp"},
		},
		{
			name:     "new Service: a cluster IP the manifest sets",
			rendered: service("", "clusterIP: 10.96.0.10, ports: [{port: 80}]"),
			merged:   service("", "clusterIP: 10.96.0.10, clusterIPs: [10.96.0.10], ports: [{port: 80}]"),
			category: report.Add,
			want:     []string{"+  clusterIP: 10.96.0.10\n"},
			notWant:  []string{"(allocated)"},
		},
		{
			name:     "headless Service",
			rendered: service("", "clusterIP: None, ports: [{port: 80}]"),
			merged:   service("", "clusterIP: None, clusterIPs: [None], ports: [{port: 80}]"),
			category: report.Add,
			want:     []string{"+  clusterIP: None\n", "+  - None\n"},
			notWant:  []string{"(allocated)"},
		},
		{
			name:     "new NodePort Service: node ports unless set",
			rendered: service("", "type: NodePort, externalTrafficPolicy: Local, ports: [{port: 80}, {port: 443, nodePort: 30443}]"),
			merged:   service("", "type: NodePort, externalTrafficPolicy: Local, healthCheckNodePort: 31999, ports: [{port: 80, nodePort: 31234}, {port: 443, nodePort: 30443}]"),
			category: report.Add,
			want:     []string{"+  healthCheckNodePort: (allocated)\n", "+  - nodePort: (allocated)\n", "+  - nodePort: 30443\n"},
			notWant:  []string{"31234", "31999"},
		},
		{
			name:     "existing Service: the live cluster IP is real",
			rendered: service("", "ports: [{port: 80}]"),
			live:     service(", uid: u", "clusterIP: 10.96.3.4, clusterIPs: [10.96.3.4], ports: [{port: 80}]"),
			merged:   service(", uid: u", "clusterIP: 10.96.3.4, clusterIPs: [10.96.3.4], ports: [{port: 80}]"),
			category: report.Unchanged,
		},
		{
			name:     "existing NodePort Service: a new port's node port",
			rendered: service("", "type: NodePort, ports: [{port: 80}, {port: 81}]"),
			live:     service("", "type: NodePort, clusterIP: 10.96.3.4, ports: [{port: 80, nodePort: 30080}]"),
			merged:   service("", "type: NodePort, clusterIP: 10.96.3.4, ports: [{port: 80, nodePort: 30080}, {port: 81, nodePort: 31777}]"),
			category: report.Modify,
			want:     []string{"   - nodePort: 30080\n", "+  - nodePort: (allocated)\n"},
			notWant:  []string{"31777", "clusterIP"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := buildOne(t, reporttest.Result(t, "svc.yaml", 1, tt.rendered, tt.live, tt.merged), config.Rules{})
			if o.Category != tt.category {
				t.Fatalf("category %s, want %s\n%s", o.Category, tt.category, o.Diff)
			}
			for _, w := range tt.want {
				if !strings.Contains(o.Diff, w) {
					t.Errorf("diff lacks %q:\n%s", w, o.Diff)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(o.Diff, w) {
					t.Errorf("diff shows %q:\n%s", w, o.Diff)
				}
			}
		})
	}
}
