package sopsdoc_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/drift-gitops/drift/internal/sopsdoc"
	"github.com/drift-gitops/drift/internal/sopsdoc/sopstest"
)

func object(t *testing.T, doc []byte) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\ntype: Opaque\nstringData: {password: s3cr3t-plain, user: admin}\ndata: {token: " + "dG9rZW4tcGxhaW4=" + "}\n"

// A Secret encrypted whole with sops --encrypted-regex '^(data|stringData)$', as
// Flux's guide has it, decrypts with the runner's age key to the Secret as written,
// without its sops field; without the key, it is ErrNoKey naming the recipient and
// no value; with decryption disabled by annotation it is not decrypted.
func TestASecretEncryptedWholeDecryptsWithTheRunnersKey(t *testing.T) {
	key, other := sopstest.NewKey(t), sopstest.NewKey(t)
	enc := object(t, sopstest.Encrypt(t, []byte(secret), "yaml", key, "^(data|stringData)$"))
	if !sopsdoc.Encrypted(enc) || strings.Contains(mustJSON(t, enc), "s3cr3t-plain") {
		t.Fatalf("the encrypted Secret: encrypted %v\n%s", sopsdoc.Encrypted(enc), mustJSON(t, enc))
	}
	t.Setenv("SOPS_AGE_KEY", other.Identity)
	_, err := sopsdoc.Decrypt(enc)
	if !errors.Is(err, sopsdoc.ErrNoKey) || !strings.Contains(err.Error(), key.Recipient) || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("another key: %v", err)
	}
	t.Setenv("SOPS_AGE_KEY", key.Identity)
	plain, err := sopsdoc.Decrypt(enc)
	if err != nil {
		t.Fatal(err)
	}
	want := object(t, []byte(secret))
	if mustJSON(t, plain) != mustJSON(t, want) {
		t.Errorf("decrypted:\n%s\nwant:\n%s", mustJSON(t, plain), mustJSON(t, want))
	}
	if sopsdoc.Encrypted(plain) {
		t.Error("the decrypted Secret still reads as encrypted")
	}
	enc.SetAnnotations(map[string]string{"kustomize.toolkit.fluxcd.io/decrypt": "Disabled"})
	if sopsdoc.Encrypted(enc) {
		t.Error("decryption disabled by annotation")
	}
}

// A Secret a kustomize generator made from encrypted files (an .env and a JSON
// file): each data value that is a SOPS document decrypts to the format of its key's
// name; other values are left as they are.
func TestGeneratedSecretValuesDecrypt(t *testing.T) {
	key := sopstest.NewKey(t)
	env := sopstest.Encrypt(t, []byte("PASSWORD=s3cr3t-env\n"), "dotenv", key, "")
	js := sopstest.Encrypt(t, []byte(`{"auths": {"r.example": {"auth": "s3cr3t-json"}}}`), "json", key, "")
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "gen"}, "data": map[string]any{
			"app.env":           base64.StdEncoding.EncodeToString(env),
			".dockerconfigjson": base64.StdEncoding.EncodeToString(js),
			"plain":             base64.StdEncoding.EncodeToString([]byte("as-is")),
		}}}
	if !sopsdoc.Encrypted(obj) {
		t.Fatal("a Secret with SOPS documents in its data is not encrypted")
	}
	if r := sopsdoc.RecipientsOf(obj); r != "age "+key.Recipient {
		t.Errorf("recipients: %q", r)
	}
	t.Setenv("SOPS_AGE_KEY", key.Identity)
	out, err := sopsdoc.Decrypt(obj)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(out.Object, "data")
	for k, want := range map[string]string{"app.env": "PASSWORD=s3cr3t-env\n", "plain": "as-is"} {
		if got, _ := base64.StdEncoding.DecodeString(data[k]); string(got) != want {
			t.Errorf("data.%s = %q, want %q", k, got, want)
		}
	}
	if got, _ := base64.StdEncoding.DecodeString(data[".dockerconfigjson"]); !strings.Contains(string(got), `"auth": "s3cr3t-json"`) {
		t.Errorf(".dockerconfigjson = %s", got)
	}
}

func mustJSON(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A document whose keys a pull request wrote to point at a Vault of its choosing
// (hc_vault_transit with its address) is never sent there, whatever the runner's
// Vault token: drift decrypts with age and PGP keys only, and says so.
func TestAKMSTheDocumentNamesIsNeverAsked(t *testing.T) {
	asked := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.Path + " " + r.Header.Get("X-Vault-Token")
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	t.Setenv("VAULT_TOKEN", "runner-vault-token")
	key := sopstest.NewKey(t)
	enc := object(t, sopstest.Encrypt(t, []byte(secret), "yaml", key, "^(data|stringData)$"))
	// The pull request adds a key group entry of a Vault at its own address.
	vault := map[string]any{"vault_address": srv.URL, "engine_path": "transit", "key_name": "k", "created_at": "2026-01-01T00:00:00Z", "enc": "vault:v1:AAAA"}
	if err := unstructured.SetNestedSlice(enc.Object, []any{vault}, "sops", "hc_vault"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOPS_AGE_KEY", sopstest.NewKey(t).Identity)
	_, err := sopsdoc.Decrypt(enc)
	if !errors.Is(err, sopsdoc.ErrNoKey) || !strings.Contains(err.Error(), "age and PGP keys only") {
		t.Errorf("err = %v", err)
	}
	select {
	case got := <-asked:
		t.Errorf("the document's Vault was asked: %s", got)
	default:
	}
}
