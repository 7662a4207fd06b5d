package main

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestVersionFlagAndCommand(t *testing.T) {
	flag, cmd := drift(t, "--version"), drift(t, "version")
	if flag.code != 0 || !strings.HasPrefix(flag.stdout, "drift ") || flag.stdout != cmd.stdout {
		t.Errorf("--version %q (exit %d), version %q", flag.stdout, flag.code, cmd.stdout)
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "bash completion", "zsh": "#compdef drift", "fish": "fish completion", "powershell": "Register-ArgumentCompleter"} {
		o := drift(t, "completion", shell)
		if o.code != 0 || !strings.Contains(o.stdout, want) {
			t.Errorf("completion %s: exit %d, no %q", shell, o.code, want)
		}
	}
}

// TestHelpGroupsFlagsAndErrorsPointToIt: drift's flags first, then the report's,
// rendering's, GitHub's and the Kubernetes connection's; a flag error says where to
// look; detect refuses the pull request's flags instead of ignoring them.
func TestHelpGroupsFlagsAndErrorsPointToIt(t *testing.T) {
	o := drift(t, "diff", "--help")
	var at []int
	for _, h := range []string{"\nFlags:\n", "\nReport flags:\n", "\nRendering and chart flags:\n", "\nGitHub flags:\n", "\nKubernetes connection flags:\n", "\nGlobal flags:\n"} {
		at = append(at, strings.Index(o.stdout, h))
	}
	for i := range at {
		if at[i] < 0 || (i > 0 && at[i] < at[i-1]) {
			t.Fatalf("groups missing or out of order (%v):\n%s", at, o.stdout)
		}
	}
	for flag, group := range map[string]int{"base": 0, "fail-on": 1, "render-timeout": 2, "github-token": 3, "kubeconfig": 4, "v": 5} {
		loc := regexp.MustCompile(`\n\s+(-\w, )?--` + flag + ` `).FindStringIndex(o.stdout)
		if loc == nil || loc[0] < at[group] || (group+1 < len(at) && loc[0] > at[group+1]) {
			t.Errorf("%s is not in group %d", flag, group)
		}
	}
	o = drift(t, "diff", "--bogus")
	if o.code != 2 || !strings.Contains(o.stderr, "unknown flag: --bogus\nSee 'drift diff --help'.") {
		t.Errorf("flag error: exit %d %q", o.code, o.stderr)
	}
	o = drift(t, "detect", "--base", "main")
	if o.code != 2 || !strings.Contains(o.stderr, "use drift diff for --base") || !strings.Contains(o.stderr, "See 'drift detect --help'.") {
		t.Errorf("detect --base: exit %d %q", o.code, o.stderr)
	}
	o = drift(t, "detect", "--github-comment")
	if o.code != 2 || !strings.Contains(o.stderr, "--github-comment is for a pull request's preview (drift diff)") {
		t.Errorf("detect --github-comment: exit %d %q", o.code, o.stderr)
	}
}

// TestVerbosityLogsRequestsNeverCredentials: -v 6 logs each request on stderr; the
// kubeconfig's credentials never appear, and a higher level is held at 6.
func TestVerbosityLogsRequestsNeverCredentials(t *testing.T) {
	ns := namespace(t)
	r := repo(t, map[string]string{"cm.yaml": sub("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: NS}\n", ns)})
	o := drift(t, "diff", "--repo", r.Dir, "--ref", "main", "-v", "9")
	if o.code != 1 || !regexp.MustCompile(`verb="PATCH" url="https://127\.0\.0\.1:\d+/api/v1/namespaces/`+ns+`/configmaps/a\?dryRun=All`).MatchString(o.stderr) ||
		!strings.Contains(o.stderr, "-v 9 is 6") {
		t.Fatalf("exit %d, no request log at -v 6:\n%s", o.code, o.stderr)
	}
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		for _, secret := range []string{a.Token, a.Password, string(a.ClientKeyData)} {
			if len(secret) > 8 && strings.Contains(o.stderr, secret) {
				t.Errorf("a credential of the kubeconfig is in the log")
			}
		}
	}
	if o := drift(t, "diff", "--repo", r.Dir, "--ref", "main"); strings.Contains(o.stderr, "https://") {
		t.Errorf("without -v, a request log:\n%s", o.stderr)
	}
}
