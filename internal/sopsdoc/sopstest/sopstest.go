// Package sopstest encrypts documents with the SOPS library as the sops command
// does (sops --encrypt --age RECIPIENT --encrypted-regex ...), for tests: keys are
// age keys made in the test (or, for the benchmark, by GenerateKey).
package sopstest

import (
	"fmt"
	"testing"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/cmd/sops/common"
	"github.com/getsops/sops/v3/cmd/sops/formats"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/version"
)

// Key is an age key made for a test: Identity is the secret key (SOPS_AGE_KEY),
// Recipient its public key.
type Key struct{ Identity, Recipient string }

// NewKey makes an age key.
func NewKey(t testing.TB) Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// GenerateKey makes an age key, for programs that are not tests (the benchmark).
func GenerateKey() (Key, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return Key{}, err
	}
	return Key{Identity: id.String(), Recipient: id.Recipient().String()}, nil
}

// Encrypt encrypts plain (in format, "yaml", "json", "dotenv") for key's recipient,
// the values of the keys encryptedRegex matches ("": every value), as the sops
// command does; it returns the document in the same format.
func Encrypt(t testing.TB, plain []byte, format string, key Key, encryptedRegex string) []byte {
	t.Helper()
	out, err := Seal(plain, format, key, encryptedRegex)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Seal is Encrypt returning its error, for programs that are not tests.
func Seal(plain []byte, format string, key Key, encryptedRegex string) ([]byte, error) {
	f := formats.FormatFromString(format)
	store := common.StoreForFormat(f, config.NewStoresConfig())
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		return nil, err
	}
	mk, err := sopsage.MasterKeyFromRecipient(key.Recipient)
	if err != nil {
		return nil, err
	}
	tree := sops.Tree{Branches: branches, Metadata: sops.Metadata{
		KeyGroups: []sops.KeyGroup{{mk}}, EncryptedRegex: encryptedRegex, Version: version.Version}}
	dataKey, errs := tree.GenerateDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()})
	if len(errs) > 0 {
		return nil, fmt.Errorf("sops data key: %v", errs)
	}
	if err := common.EncryptTree(common.EncryptTreeOpts{DataKey: dataKey, Tree: &tree, Cipher: aes.NewCipher()}); err != nil {
		return nil, err
	}
	return store.EmitEncryptedFile(tree)
}
