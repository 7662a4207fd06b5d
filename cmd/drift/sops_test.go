package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/report"
	"github.com/drift-gitops/drift/internal/sopsdoc/sopstest"
)

// TestSOPSSecretsArePreviewedAsFluxDecryptsThem: a Flux Kustomization with
// decryption: {provider: sops} applies a Secret encrypted with an age key made
// here. The live cluster holds it decrypted, applied as kustomize-controller applies
// it. With the runner's key (SOPS_AGE_KEY), a re-encryption of the same values is
// no change, and a new value is a modification whose values are masked. Without a
// key, nothing is an error or a false change: the same encrypted document is
// unchanged, a changed one a modification whose values are not compared, each
// saying why and naming the recipient. Neither the key nor a value is in any output
// or the dry-run cache.
func TestSOPSSecretsArePreviewedAsFluxDecryptsThem(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	key := sopstest.NewKey(t)
	secret := func(password string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: " + ns + "}\ntype: Opaque\nstringData: {password: " + password + "}\n"
	}
	encrypted := func(password string) string {
		return string(sopstest.Encrypt(t, []byte(secret(password)), "yaml", key, "^(data|stringData)$"))
	}
	apply(t, "kustomize-controller", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: "+ns+
		"\n  labels: {kustomize.toolkit.fluxcd.io/name: sops-apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}\ntype: Opaque\nstringData: {password: s3cr3t-one}\n")
	base := map[string]string{
		"flux/source.yaml": fluxSource,
		"flux/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: sops-apps, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./apps, prune: true, decryption: {provider: sops}, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"apps/secret.yaml":    encrypted("s3cr3t-one"),
		"apps/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n",
	}
	cacheDir := t.TempDir()
	t.Setenv("DRIFT_CACHE_DIR", cacheDir)
	runs := 0
	run := func(t *testing.T, change string) (*report.Report, outcome) {
		t.Helper()
		// A ConfigMap beside it changes each time, so that the target is previewed
		// when the Secret's file does not change.
		runs++
		r := fluxRepo(t, base, map[string]string{"apps/secret.yaml": change,
			"apps/cm.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: beside, namespace: %s}\ndata: {run: '%d'}\n", ns, runs)})
		rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--target", "Kustomization/flux-system/sops-apps")
		for _, leak := range []string{key.Identity, "s3cr3t-one", "s3cr3t-two", "ENC[AES256_GCM"} {
			if strings.Contains(o.stdout+o.stderr, leak) {
				t.Errorf("the output shows %.20s…", leak)
			}
		}
		return rep, o
	}
	secretOf := func(rep *report.Report) *report.Object {
		tg := targetNamed(rep, "Kustomization/flux-system/sops-apps")
		if tg == nil {
			return nil
		}
		for i := range tg.Objects {
			if tg.Objects[i].Kind == "Secret" {
				return &tg.Objects[i]
			}
		}
		return nil
	}
	warned := func(o *report.Object) string {
		for _, w := range o.Warnings {
			if w.Reason == "encrypted" {
				return w.Message
			}
		}
		return ""
	}

	t.Run("with the key", func(t *testing.T) {
		t.Setenv("SOPS_AGE_KEY", key.Identity)
		rep, o := run(t, encrypted("s3cr3t-one"))
		if s := secretOf(rep); o.code != exitChanges || s == nil || s.Category != report.Unchanged || warned(s) != "" {
			t.Errorf("the same values encrypted again: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
		rep, o = run(t, encrypted("s3cr3t-two"))
		if s := secretOf(rep); o.code != exitChanges || s == nil || s.Category != report.Modify || !strings.Contains(s.Diff, "*** (after)") {
			t.Errorf("a new value: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
	})
	t.Run("without a key", func(t *testing.T) {
		t.Setenv("SOPS_AGE_KEY", sopstest.NewKey(t).Identity) // another key: none of the runner's decrypts it
		t.Setenv("HOME", t.TempDir())                         // and no keys file of the user's
		rep, o := run(t, base["apps/secret.yaml"])
		s := secretOf(rep)
		if o.code != exitChanges || !rep.Complete || s == nil || s.Category != report.Unchanged || !strings.Contains(warned(s), key.Recipient) {
			t.Errorf("the base's encrypted document: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
		rep, o = run(t, encrypted("s3cr3t-two"))
		s = secretOf(rep)
		if o.code != exitChanges || !rep.Complete || s == nil || s.Category != report.Modify || s.What != "encrypted values change (not compared: no SOPS key)" ||
			!strings.Contains(warned(s), "its encrypted document changes") || !strings.Contains(s.Diff, "\\ encrypted with SOPS and not decrypted") {
			t.Errorf("a changed encrypted document: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
	})
	t.Run("on an ephemeral server without a key", func(t *testing.T) {
		t.Setenv("SOPS_AGE_KEY", sopstest.NewKey(t).Identity)
		t.Setenv("HOME", t.TempDir())
		r := fluxRepo(t, base, map[string]string{"apps/secret.yaml": encrypted("s3cr3t-two")})
		rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--cluster", "ephemeral", "--target", "Kustomization/flux-system/sops-apps")
		s := secretOf(rep)
		if o.code != exitChanges || !rep.Complete || s == nil || s.Category != report.Modify || !strings.Contains(warned(s), "not compared") ||
			strings.Contains(o.stdout+o.stderr, "ENC[AES256_GCM") {
			t.Errorf("ephemeral, a changed encrypted document: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
	})
	// Nothing of the key or the values is kept in drift's cache.
	_ = filepath.WalkDir(cacheDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, leak := range []string{key.Identity, "s3cr3t-one", "s3cr3t-two"} {
			if strings.Contains(string(data), leak) {
				t.Errorf("%s holds %.20s…", p, leak)
			}
		}
		return nil
	})
}

// TestAnEncryptedEnvFileOfASecretGeneratorIsDecryptedBeforeTheBuild: a Flux
// Kustomization's kustomization.yaml generates a Secret from a dotenv file encrypted
// with SOPS, and patches it with an encrypted patch file. kustomize-controller decrypts the file before the build
// (DecryptSources); so does drift with the runner's key: the live Secret holding the
// same values is unchanged, a new value a masked modification. Without a key the
// generated Secret is opaque (its values and SOPS' metadata keys left out), never an
// error, and no ciphertext or value is shown.
func TestAnEncryptedEnvFileOfASecretGeneratorIsDecryptedBeforeTheBuild(t *testing.T) {
	installFluxCRDs(t)
	ns := namespace(t)
	key := sopstest.NewKey(t)
	env := func(token string) string {
		return string(sopstest.Encrypt(t, []byte("API_TOKEN="+token+"\nUSER=drift\n"), "dotenv", key, ""))
	}
	apply(t, "kustomize-controller", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\n  namespace: "+ns+
		"\n  labels: {kustomize.toolkit.fluxcd.io/name: env-apps, kustomize.toolkit.fluxcd.io/namespace: flux-system}\ntype: Opaque\nstringData: {API_TOKEN: s3cr3t-env-one, USER: drift, PATCHED: s3cr3t-patch}\n")
	base := map[string]string{
		"flux/source.yaml": fluxSource,
		"flux/apps.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: env-apps, namespace: flux-system}\n" +
			"spec: {interval: 10m, path: ./apps, prune: true, decryption: {provider: sops}, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"apps/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " + ns + "\nresources: [namespace.yaml]\n" +
			"generatorOptions: {disableNameSuffixHash: true}\nsecretGenerator:\n- name: app-env\n  envs: [app.env]\npatches:\n- path: patch.yaml\n",
		"apps/patch.yaml":     string(sopstest.Encrypt(t, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: app-env}\nstringData: {PATCHED: s3cr3t-patch}\n"), "yaml", key, "^(data|stringData)$")),
		"apps/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n",
		"apps/app.env":        env("s3cr3t-env-one"),
	}
	run := func(t *testing.T, change string) (*report.Report, outcome) {
		t.Helper()
		r := fluxRepo(t, base, map[string]string{"apps/app.env": change})
		rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main", "--base", "base", "--target", "Kustomization/flux-system/env-apps")
		for _, leak := range []string{key.Identity, "s3cr3t-env-one", "s3cr3t-env-two", "s3cr3t-patch", "ENC[AES256_GCM"} {
			if strings.Contains(o.stdout+o.stderr, leak) {
				t.Errorf("the output shows %.20s…", leak)
			}
		}
		return rep, o
	}
	secretOf := func(rep *report.Report) *report.Object {
		if tg := targetNamed(rep, "Kustomization/flux-system/env-apps"); tg != nil {
			for i := range tg.Objects {
				if tg.Objects[i].Kind == "Secret" {
					return &tg.Objects[i]
				}
			}
		}
		return nil
	}
	t.Run("with the key", func(t *testing.T) {
		t.Setenv("SOPS_AGE_KEY", key.Identity)
		rep, o := run(t, env("s3cr3t-env-one"))
		if s := secretOf(rep); o.code == exitError || s == nil || s.Category != report.Unchanged {
			t.Errorf("the same values encrypted again: exit %d, %+v\n%s\n%s", o.code, s, s.Diff, o.stderr)
		}
		rep, o = run(t, env("s3cr3t-env-two"))
		if s := secretOf(rep); o.code != exitChanges || s == nil || s.Category != report.Modify || !strings.Contains(s.Diff, "API_TOKEN: '*** (after)'") ||
			strings.Contains(s.Diff, "sops_") {
			t.Errorf("a new value: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
	})
	t.Run("without a key", func(t *testing.T) {
		t.Setenv("SOPS_AGE_KEY", sopstest.NewKey(t).Identity)
		t.Setenv("HOME", t.TempDir())
		rep, o := run(t, env("s3cr3t-env-two"))
		s := secretOf(rep)
		if o.code == exitError || !rep.Complete || s == nil || s.Category != report.Modify || strings.Contains(s.Diff, "sops_") {
			t.Fatalf("a changed encrypted env file: exit %d, %+v\n%s", o.code, s, o.stderr)
		}
		if w := s.Warnings; len(w) == 0 || !strings.Contains(w[0].Message, "its secretGenerator's env file") || !strings.Contains(w[0].Message, key.Recipient) {
			t.Errorf("warnings: %+v", w)
		}
	})
}

// TestKSOPSGeneratorsAreReadAsKSOPSDecryptsThem: an Argo CD-style kustomization
// generates a Secret with KSOPS (a viaduct.ai/v1 ksops generator over a SOPS-encrypted
// manifest), a plugin drift does not run. Its files are built as resources and
// decrypted with the runner's key: the live Secret holding the same value is
// unchanged; without a key it is opaque, never an error or ciphertext; the target's
// notes name the generator.
func TestKSOPSGeneratorsAreReadAsKSOPSDecryptsThem(t *testing.T) {
	ns := namespace(t)
	key := sopstest.NewKey(t)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: ksops-db}\ntype: Opaque\nstringData: {password: s3cr3t-ksops}\n"
	apply(t, "kubectl", "apiVersion: v1\nkind: Secret\nmetadata: {name: ksops-db, namespace: "+ns+"}\ntype: Opaque\nstringData: {password: s3cr3t-ksops}\n")
	r := repo(t, map[string]string{
		"drift.yaml":              "targets: [{name: apps, path: apps}]\n",
		"apps/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " + ns + "\ngenerators: [secret-generator.yaml]\n",
		"apps/secret-generator.yaml": "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: secrets\n  annotations:\n" +
			"    config.kubernetes.io/function: |\n      exec:\n        path: ksops\nfiles: [./db.enc.yaml]\n",
		"apps/db.enc.yaml": string(sopstest.Encrypt(t, []byte(secret), "yaml", key, "^(data|stringData)$")),
	})
	secretOf := func(rep *report.Report) *report.Object {
		for i, o := range rep.Targets[0].Objects {
			if o.Kind == "Secret" {
				return &rep.Targets[0].Objects[i]
			}
		}
		return nil
	}
	t.Setenv("SOPS_AGE_KEY", key.Identity)
	rep, o := driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if s := secretOf(rep); o.code != exitNoChanges || s == nil || s.Category != report.Unchanged || s.Namespace != ns || len(s.Warnings) != 0 ||
		!strings.Contains(strings.Join(rep.Targets[0].Notes, "\n"), "KSOPS generator apps/secret-generator.yaml") {
		t.Errorf("with the key: exit %d, %+v %v\n%s", o.code, s, rep.Targets[0].Notes, o.stderr)
	}
	t.Setenv("SOPS_AGE_KEY", sopstest.NewKey(t).Identity)
	t.Setenv("HOME", t.TempDir())
	rep, o = driftJSON(t, "diff", "--repo", r.Dir, "--ref", "main")
	if s := secretOf(rep); o.code == exitError || s == nil || s.Category != report.Unchanged || len(s.Warnings) == 0 || !strings.Contains(s.Warnings[0].Message, key.Recipient) {
		t.Errorf("without a key: exit %d, %+v\n%s", o.code, s, o.stderr)
	}
	for _, leak := range []string{"s3cr3t-ksops", "ENC[AES256_GCM", key.Identity} {
		if strings.Contains(o.stdout+o.stderr, leak) {
			t.Errorf("the output shows %.20s…", leak)
		}
	}
}
