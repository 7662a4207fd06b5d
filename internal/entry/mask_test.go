package entry

import (
	"testing"

	"github.com/drift-gitops/drift/internal/report/reporttest"
)

func TestMaskSecrets(t *testing.T) {
	live := reporttest.Obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, annotations: {kubectl.kubernetes.io/last-applied-configuration: x}}\ndata: {same: YQ==, changed: Yg==, gone: Yw==}\n")
	merged := reporttest.Obj(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, annotations: {kubectl.kubernetes.io/last-applied-configuration: x}}\ndata: {same: YQ==, changed: ZA==, added: ZQ==}\n")
	maskSecrets(live, merged)
	l, _ := toYAML(live)
	m, _ := toYAML(merged)
	wantL := "apiVersion: v1\ndata:\n  changed: '*** (before)'\n  gone: '***'\n  same: '***'\nkind: Secret\nmetadata:\n  name: s\n"
	wantM := "apiVersion: v1\ndata:\n  added: '***'\n  changed: '*** (after)'\n  same: '***'\nkind: Secret\nmetadata:\n  name: s\n"
	if l != wantL || m != wantM {
		t.Fatalf("live:\n%s\nmerged:\n%s", l, m)
	}
}
