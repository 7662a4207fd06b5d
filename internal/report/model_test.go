package report

import (
	"testing"
)

func TestFileNamesAreKubectlDiffs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id   ID
		want string
	}{
		{ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, "apps.v1.Deployment.shop.web"},
		{ID{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "db"}, "v1.Secret.shop.db"},
		{ID{Version: "v1", Kind: "Namespace", Name: "production"}, "v1.Namespace..production"},
		{ID{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "view"}, "rbac.authorization.k8s.io.v1.ClusterRole..view"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := kubectlName(tt.id); got != tt.want {
				t.Fatalf("kubectlName(%+v) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

// TestNamesThatWouldWriteLinesAreQuoted: a name or file from content holding a newline
// or a terminal escape is shown quoted, so it cannot forge lines of the report.
func TestNamesThatWouldWriteLinesAreQuoted(t *testing.T) {
	o := Object{ID: ID{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "x\nNo changes."}, Source: "a\x1b[2Jb.yaml", Document: 2}
	if got, want := o.Title(), `v1 ConfigMap ns/"x\nNo changes."`; got != want {
		t.Errorf("Title() = %q, want %q", got, want)
	}
	if got, want := o.Where(), `"a\x1b[2Jb.yaml" document 2`; got != want {
		t.Errorf("Where() = %q, want %q", got, want)
	}
	plain := Object{ID: ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "wéb"}, Source: "apps/web.yaml"}
	if got := plain.Title() + " " + plain.Where(); got != "apps/v1 Deployment shop/wéb apps/web.yaml" {
		t.Errorf("a visible name is shown as it is: %q", got)
	}
}
