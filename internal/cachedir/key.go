package cachedir

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// keySize is the key's length in bytes: an HMAC-SHA256 key.
const keySize = 32

// readKey reads the cache's key from path, or makes one there (random, for this
// user alone) when there is none. A key that is a symbolic link, not the user's, or
// that others may write, is refused: whoever can write it could forge the cache.
func readKey(path string) ([]byte, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newKey(path)
	}
	if err != nil {
		return nil, err
	}
	if err := own(path, info, false); err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o022 != 0 {
		return nil, &Refused{Path: path, Why: "(the key) may be written by other users: make it the user's alone (chmod 600)"}
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 2*keySize+2)
	n, _ := f.Read(buf)
	key, err := hex.DecodeString(strings.TrimSpace(string(buf[:n])))
	if err != nil || len(key) != keySize {
		return nil, &Refused{Path: path, Why: fmt.Sprintf("(the key) does not hold %d hex-encoded bytes: remove it, and drift makes a new one (the cache's entries are then misses)", keySize)}
	}
	return key, nil
}

// newKey makes a random key at path, never over a file that is there.
func newKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("failed to create the directory of drift's cache key: %w", err)
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path) // another drift made it meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("failed to create drift's cache key: %w", err)
	}
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("failed to write drift's cache key: %w", err)
	}
	return key, nil
}

// sealMagic starts a sealed file; the MAC of what follows, in hex, ends its line.
const sealMagic = "drift-sealed 1 "

// seal is data with its MAC, for the file rel.
func (d *Dir) seal(rel string, data []byte) []byte {
	return append([]byte(sealMagic+hex.EncodeToString(d.sealMAC(rel, data))+"\n"), data...)
}

// sealMAC binds data to the name of the file it is in: a sealed file moved to
// another name (a chart's record put in another chart's place) is not drift's. It
// does not bind it to where the cache directory is: the GitLab component restores
// the cache into a new directory for each job.
func (d *Dir) sealMAC(rel string, data []byte) []byte {
	m := d.MAC("sealed file")
	m.Write([]byte(rel + "\x00"))
	m.Write(data)
	return m.Sum(nil)
}

// ErrNotSealed is a file drift did not write with this cache's key.
var ErrNotSealed = errors.New("not written by drift with this cache's key")

// WriteSealed writes data to rel whole, with a MAC that ReadSealed checks.
func (d *Dir) WriteSealed(rel string, data []byte) error {
	return d.WriteFile(rel, d.seal(rel, data))
}

// ReadSealed reads what WriteSealed wrote to rel; a file with no MAC, or one that
// does not match (anyone else's, or moved from another name), is ErrNotSealed.
func (d *Dir) ReadSealed(rel string) ([]byte, error) {
	raw, err := d.ReadFile(rel)
	if err != nil {
		return nil, err
	}
	line, data, ok := strings.Cut(string(raw), "\n")
	mac, err := hex.DecodeString(strings.TrimPrefix(line, sealMagic))
	if !ok || !strings.HasPrefix(line, sealMagic) || err != nil || !hmac.Equal(mac, d.sealMAC(rel, []byte(data))) {
		return nil, fmt.Errorf("%s: %w", d.Join(rel), ErrNotSealed)
	}
	return []byte(data), nil
}
