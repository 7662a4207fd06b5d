package sopsdoc_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drift-gitops/drift/internal/sopsdoc"
	"github.com/drift-gitops/drift/internal/sopsdoc/sopstest"
)

// oracleDir holds SOPS documents encrypted for a test age key (key.agekey, made for
// these cases and nothing else) and what kustomize-controller's own decryptor made of
// them (*.want.json, sources.want/), recorded by hack/sops-oracle.
const oracleDir = "testdata/oracle"

// TestWriteOracleCases writes the cases anew, with a new key, when
// DRIFT_WRITE_SOPS_CASES=1; hack/sops-oracle then records the decryptor's answers.
func TestWriteOracleCases(t *testing.T) {
	if os.Getenv("DRIFT_WRITE_SOPS_CASES") != "1" {
		t.Skip("DRIFT_WRITE_SOPS_CASES=1 writes the oracle cases")
	}
	key := sopstest.NewKey(t)
	enc := func(plain, format, regex string) string {
		return string(sopstest.Encrypt(t, []byte(plain), format, key, regex))
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	whole := "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop, labels: {app: shop}}\ntype: Opaque\n" +
		"stringData: {password: s3cr3t-plain, url: 'postgres://db:5432/shop?sslmode=require'}\ndata: {token: " + b64("token-plain\n") + "}\n"
	files := map[string]string{
		"key.agekey":                key.Identity + "\n",
		"cases/whole.yaml":          enc(whole, "yaml", "^(data|stringData)$"),
		"cases/whole-disabled.yaml": strings.Replace(enc(whole, "yaml", "^(data|stringData)$"), "labels:", "annotations:\n        kustomize.toolkit.fluxcd.io/decrypt: disabled\n    labels:", 1),
		"cases/generated.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: generated, namespace: shop}\ntype: Opaque\ndata:\n" +
			"  app.env: " + b64(enc("API_TOKEN=t0ken\nUSER=admin\n", "dotenv", "")) + "\n" +
			"  config.json: " + b64(enc(`{"password": "s3cr3t", "port": 5432}`, "json", "")) + "\n" +
			"  settings.yaml: " + b64(enc("password: s3cr3t\nlist: [a, b]\n", "yaml", "")) + "\n" +
			"  .dockerconfigjson: " + b64(enc(`{"auths": {"r.example": {"auth": "dTpw"}}}`, "json", "")) + "\n" +
			"  plain.txt: " + b64("not encrypted\n") + "\n",
		"sources/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nsecretGenerator:\n" +
			"- name: app\n  envs: [app.env, extra.vars]\n  files: [config.yaml, tls.json=cert.json, plain.txt]\npatches:\n- path: patch.yaml\n",
		"sources/patch.yaml":  enc("apiVersion: v1\nkind: Secret\nmetadata: {name: app}\nstringData: {password: p4tched, port: '5432'}\n", "yaml", "^(data|stringData)$"),
		"sources/app.env":     enc("API_TOKEN=t0ken\nUSER=admin\nEMPTY=\n", "dotenv", ""),
		"sources/extra.vars":  enc("REGION=eu-west-1\n", "dotenv", ""),
		"sources/config.yaml": enc("password: s3cr3t\nnested: {key: value}\n", "yaml", ""),
		"sources/cert.json":   enc(`{"cert": "---BEGIN---", "n": 1}`, "json", ""),
		"sources/plain.txt":   "not encrypted\n",
	}
	_ = os.RemoveAll(oracleDir)
	for name, data := range files {
		p := filepath.Join(oracleDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOracle: drift decrypts each recorded case as kustomize-controller's decryptor
// did (the object DecryptResource returned; what DecryptSources left of each file a
// secretGenerator reads), with the same key.
func TestOracle(t *testing.T) {
	key, err := os.ReadFile(filepath.Join(oracleDir, "key.agekey"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOPS_AGE_KEY", strings.TrimSpace(string(key)))
	t.Setenv("SOPS_AGE_KEY_FILE", "")
	cases, _ := filepath.Glob(filepath.Join(oracleDir, "cases", "*.yaml"))
	if len(cases) < 3 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, file := range cases {
		data, _ := os.ReadFile(file)
		wantJSON, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".want.json")
		if err != nil {
			t.Fatalf("%s: no recorded answer (hack/sops-oracle): %v", file, err)
		}
		obj := object(t, data)
		var got any
		if sopsdoc.Encrypted(obj) {
			plain, err := sopsdoc.Decrypt(obj)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			got = plain.Object
		}
		var want any
		_ = json.Unmarshal(wantJSON, &want)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s:\ndrift:               %s\nkustomize-controller: %s", file, g, w)
		}
	}
	envs := map[string]bool{"app.env": true, "extra.vars": true}
	entries, _ := os.ReadDir(filepath.Join(oracleDir, "sources"))
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(oracleDir, "sources", e.Name()))
		want, err := os.ReadFile(filepath.Join(oracleDir, "sources.want", e.Name()))
		if err != nil {
			t.Fatalf("%s: no recorded answer: %v", e.Name(), err)
		}
		var plain []byte
		if e.Name() == "patch.yaml" {
			var values []string
			plain, values, err = sopsdoc.DecryptPatch(e.Name(), data)
			if strings.Join(values, ",") != "p4tched,5432" && strings.Join(values, ",") != "5432,p4tched" {
				t.Errorf("the patch's encrypted values: %q", values)
			}
		} else {
			plain, _, err = sopsdoc.DecryptSource(e.Name(), data, envs[e.Name()])
		}
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if plain == nil {
			plain = data // not encrypted: left as it is
		}
		if string(plain) != string(want) {
			t.Errorf("%s:\ndrift:\n%s\nkustomize-controller:\n%s", e.Name(), plain, want)
		}
	}
}
