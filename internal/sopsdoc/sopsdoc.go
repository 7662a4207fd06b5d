// Package sopsdoc decrypts SOPS-encrypted Kubernetes objects as Flux's
// kustomize-controller does before it applies them (its internal/decryptor:
// DecryptResource), with the SOPS library itself (github.com/getsops/sops/v3): a
// Secret encrypted whole (a sops field with a mac), or a Secret whose data values
// are SOPS documents (a kustomize generator's encrypted files). The keys are the
// runner's age and PGP keys, found as the sops command finds them (SOPS_AGE_KEY,
// SOPS_AGE_KEY_FILE, the user's age keys file, GnuPG's keyring); never from the
// repository or drift.yaml, and never a KMS or Vault the document names (its
// address is the pull request's to choose).
package sopsdoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/pgp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Provider is the Flux Kustomization's spec.decryption.provider drift decrypts.
const Provider = "sops"

// disabledAnnotation turns decryption off for one object, as in Flux.
const disabledAnnotation = "kustomize.toolkit.fluxcd.io/decrypt"

// markers tell a SOPS document in a Secret's data value, and its format, as
// kustomize-controller's detectFormatFromMarkerBytes does.
var markers = []struct {
	format formats.Format
	marker []byte
}{
	{formats.Yaml, []byte("mac: ENC[")},
	{formats.Json, []byte("\"mac\": \"ENC[")},
	{formats.Dotenv, []byte("sops_mac=ENC[")},
	{formats.Ini, []byte("[sops]")},
}

// Encrypted reports whether kustomize-controller would decrypt obj: a v1 Secret
// with a sops field holding a mac, or one with a data value that is a SOPS
// document; not when its decrypt annotation says disabled.
func Encrypted(obj *unstructured.Unstructured) bool {
	if obj == nil || obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" ||
		strings.EqualFold(obj.GetAnnotations()[disabledAnnotation], "disabled") {
		return false
	}
	if whole(obj) {
		return true
	}
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	for _, v := range data {
		if s, ok := v.(string); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil && formatOf(b) >= 0 {
				return true
			}
		}
	}
	return false
}

// whole reports whether the Secret is encrypted whole: a sops field with a mac.
func whole(obj *unstructured.Unstructured) bool {
	mac, found, _ := unstructured.NestedString(obj.Object, "sops", "mac")
	return found && mac != ""
}

// formatOf is the format of a SOPS document in data, -1 for none.
func formatOf(data []byte) formats.Format {
	for _, m := range markers {
		if bytes.Contains(data, m.marker) {
			return m.format
		}
	}
	return -1
}

// ErrNoKey says none of the runner's keys decrypts the document's data key.
var ErrNoKey = errors.New("none of the runner's SOPS keys decrypts it")

// Decrypt returns obj decrypted as kustomize-controller decrypts it: a Secret
// encrypted whole with its values in clear and no sops field, or each data value
// that is a SOPS document decrypted to the format of its key's file name (JSON for
// .dockerconfigjson). An error wrapping ErrNoKey says no key of the runner's
// decrypts it; any other, that the document cannot be read or decrypted. Its
// messages never hold a value.
func Decrypt(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if whole(obj) {
		doc, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		plain, err := decrypt(doc, formats.Json, formats.Json)
		if err != nil {
			return nil, err
		}
		out := &unstructured.Unstructured{}
		if err := out.UnmarshalJSON(plain); err != nil {
			return nil, fmt.Errorf("the decrypted Secret is not an object: %w", err)
		}
		return out, nil
	}
	out := obj.DeepCopy()
	data, _, _ := unstructured.NestedMap(out.Object, "data")
	for _, key := range sortedKeys(data) {
		s, ok := data[key].(string)
		if !ok {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			continue // the build says what is wrong with it, as in Flux
		}
		in := formatOf(b)
		if in < 0 {
			continue
		}
		outFormat := formats.FormatForPath(key)
		if strings.HasSuffix(key, ".dockerconfigjson") {
			outFormat = formats.Json
		}
		plain, err := decrypt(b, in, outFormat)
		if err != nil {
			return nil, fmt.Errorf("data.%s: %w", key, err)
		}
		data[key] = base64.StdEncoding.EncodeToString(plain)
	}
	if err := unstructured.SetNestedMap(out.Object, data, "data"); err != nil {
		return nil, err
	}
	return out, nil
}

// DecryptSource decrypts a file a kustomization's secretGenerator reads, before the
// build, as kustomize-controller's DecryptSources does: its format from its name
// (JSON for .dockerconfigjson; an env file of no known format is dotenv), decrypted
// only when it holds that format's SOPS marker (nil, nil when it does not), and
// emitted in the same format. values are what the generated Secret holds of it, for
// the scrubber: an env file's values, else the whole file. Errors are as Decrypt's.
func DecryptSource(name string, data []byte, env bool) (plain []byte, values []string, err error) {
	format := formats.FormatForPath(name)
	if strings.HasSuffix(name, ".dockerconfigjson") {
		format = formats.Json
	}
	if env && format == formats.Binary {
		format = formats.Dotenv
	}
	if plain, err = decryptFile(data, format); plain == nil || err != nil {
		return nil, nil, err
	}
	if !env || format != formats.Dotenv {
		return plain, []string{string(plain)}, nil
	}
	for _, line := range strings.Split(string(plain), "\n") {
		if _, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(strings.TrimSpace(line), "#") && v != "" {
			values = append(values, v)
		}
	}
	return plain, values, nil
}

// DecryptPatch decrypts a kustomization's patch file before the build, as
// kustomize-controller's DecryptSources does for `patches` with a path: its format
// from its name, decrypted only when it holds that format's SOPS marker (nil, nil
// when it does not). values are the plaintext of every value that was encrypted, for
// the scrubber. Errors are as Decrypt's.
func DecryptPatch(name string, data []byte) (plain []byte, values []string, err error) {
	if plain, err = decryptFile(data, formats.FormatForPath(name)); plain == nil || err != nil {
		return nil, nil, err
	}
	encDocs, plainDocs := splitDocs(data), splitDocs(plain)
	for i := range min(len(encDocs), len(plainDocs)) {
		var enc, dec any
		if yaml.Unmarshal(encDocs[i], &enc) != nil || yaml.Unmarshal(plainDocs[i], &dec) != nil {
			continue
		}
		values = append(values, encryptedLeaves(enc, dec)...)
	}
	return plain, values, nil
}

// decryptFile decrypts a file of format in place of kustomize-controller's
// sopsDecryptFile: only when it holds that format's SOPS marker (nil, nil when it
// does not), emitted in the same format.
func decryptFile(data []byte, format formats.Format) ([]byte, error) {
	for _, m := range markers {
		if m.format == format && bytes.Contains(data, m.marker) {
			return decrypt(data, format, format)
		}
	}
	return nil, nil
}

// splitDocs splits a YAML stream into its documents (JSON is one).
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(doc) != "" {
			out = append(out, []byte(doc))
		}
	}
	return out
}

// encryptedLeaves are the values of dec at the places enc holds ciphertext (ENC[…]).
func encryptedLeaves(enc, dec any) []string {
	switch e := enc.(type) {
	case map[string]any:
		d, _ := dec.(map[string]any)
		var out []string
		for k, v := range e {
			if k != "sops" {
				out = append(out, encryptedLeaves(v, d[k])...)
			}
		}
		return out
	case []any:
		d, _ := dec.([]any)
		var out []string
		for i, v := range e {
			if i < len(d) {
				out = append(out, encryptedLeaves(v, d[i])...)
			}
		}
		return out
	case string:
		if strings.HasPrefix(e, "ENC[") && dec != nil {
			if s := fmt.Sprint(dec); s != "" {
				return []string{s}
			}
		}
	}
	return nil
}

// FromEncryptedEnv reports whether a Secret was generated from an env file still
// encrypted (no key of the runner's decrypted it before the build): its keys hold
// SOPS' metadata (sops_mac) beside ciphertext.
func FromEncryptedEnv(obj *unstructured.Unstructured) bool {
	if obj == nil || obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" {
		return false
	}
	_, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "data", "sops_mac")
	return found
}

// decrypt is kustomize-controller's SopsDecryptWithFormat, without the MAC check
// (off there by default: what kustomize adds to an object changes its MAC): the
// data key from the runner's keys through SOPS' local key service, the tree
// decrypted with it, emitted in the output format.
func decrypt(data []byte, in, out formats.Format) (_ []byte, err error) {
	defer func() {
		// Malformed input can make SOPS panic (kustomize-controller recovers too).
		if r := recover(); r != nil {
			err = fmt.Errorf("SOPS failed on the document: %v", r)
		}
	}()
	tree, err := common.StoreForFormat(in, config.NewStoresConfig()).LoadEncryptedFile(data)
	if err != nil {
		return nil, fmt.Errorf("not a SOPS document: %s", userError(err))
	}
	recipients := strings.Join(Recipients(tree.Metadata), ", ")
	// Only the runner's own age and PGP keys: a KMS or Vault key names in the
	// document an endpoint the pull request chose, which would be sent the
	// runner's cloud credentials.
	local, skipped := localKeys(tree.Metadata.KeyGroups)
	tree.Metadata.KeyGroups = local
	key, err := tree.Metadata.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()}, sops.DefaultDecryptionOrder)
	if err != nil {
		if skipped {
			return nil, fmt.Errorf("%w (%s; drift decrypts with age and PGP keys only, never through a KMS or Vault the document names)", ErrNoKey, recipients)
		}
		return nil, fmt.Errorf("%w (%s)", ErrNoKey, recipients)
	}
	if _, err := tree.Decrypt(key, aes.NewCipher()); err != nil {
		// Its message may quote a value: say only that it failed.
		return nil, errors.New("SOPS cannot decrypt a value of it with its data key (is it edited by hand?)")
	}
	plain, err := common.StoreForFormat(out, config.NewStoresConfig()).EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, errors.New("SOPS cannot write the decrypted document in the format its file name asks for")
	}
	return plain, nil
}

// localKeys are the key groups with their age and PGP keys only; skipped says
// other keys (cloud KMS, Vault) were left out.
func localKeys(groups []sops.KeyGroup) (out []sops.KeyGroup, skipped bool) {
	for _, g := range groups {
		var keep sops.KeyGroup
		for _, k := range g {
			switch k.TypeToIdentifier() {
			case sopsage.KeyTypeIdentifier, pgp.KeyTypeIdentifier:
				keep = append(keep, k)
			default:
				skipped = true
			}
		}
		out = append(out, keep)
	}
	return out, skipped
}

// userError is err's message as SOPS tells it to users.
func userError(err error) string {
	var ue sops.UserError
	if errors.As(err, &ue) {
		return strings.TrimSpace(ue.UserError())
	}
	return err.Error()
}

// Recipients are the keys a document is encrypted for, as SOPS names them (age
// recipients, PGP fingerprints, KMS key ids): who can decrypt it.
func Recipients(m sops.Metadata) []string {
	var out []string
	for _, group := range m.KeyGroups {
		for _, k := range group {
			out = append(out, k.TypeToIdentifier()+" "+k.ToString())
		}
	}
	sort.Strings(out)
	return out
}

// RecipientsOf are the keys obj is encrypted for: encrypted whole, or each of its data
// values that is a SOPS document ("unknown" when none can be read).
func RecipientsOf(obj *unstructured.Unstructured) string {
	var out []string
	if whole(obj) {
		if doc, err := json.Marshal(obj.Object); err == nil {
			if tree, err := common.StoreForFormat(formats.Json, config.NewStoresConfig()).LoadEncryptedFile(doc); err == nil {
				out = Recipients(tree.Metadata)
			}
		}
	} else {
		data, _, _ := unstructured.NestedMap(obj.Object, "data")
		for _, key := range sortedKeys(data) {
			s, _ := data[key].(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if f := formatOf(b); err == nil && f >= 0 {
				if tree, err := common.StoreForFormat(f, config.NewStoresConfig()).LoadEncryptedFile(b); err == nil {
					out = append(out, Recipients(tree.Metadata)...)
				}
			}
		}
		sort.Strings(out)
		out = slices.Compact(out)
	}
	if len(out) == 0 {
		return "encrypted for keys drift cannot read"
	}
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
