package render

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// roundTrip is how kubectl reads a YAML document: sigs.k8s.io/yaml's YAMLToJSON,
// then apimachinery's JSON. ok is false when either fails.
func roundTrip(data []byte) (any, bool) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, false
	}
	var v any
	if err := utiljson.Unmarshal(js, &v); err != nil {
		return nil, false
	}
	return v, true
}

// checkDecodeYAML fails when decodeYAML reads data as something other than the round
// trip does, or reads what the round trip cannot.
func checkDecodeYAML(t *testing.T, name string, data []byte) (fast bool) {
	t.Helper()
	_, got, ok := decodeYAML(data)
	if !ok {
		return false
	}
	want, wantOK := roundTrip(data)
	if !wantOK {
		t.Errorf("%s: read as %s, but YAMLToJSON and JSON fail on it", name, shortly(got))
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: read as\n%s\nYAMLToJSON and JSON read it as\n%s", name, shortly(got), shortly(want))
	}
	return true
}

// shortly is v as %#v prints it, cut after 2,000 bytes.
func shortly(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// yamlCases are documents whose values YAML 1.1 and the JSON round trip treat in
// their own ways: numbers of every form, keys that are not strings, timestamps,
// binary, anchors and merge keys, and what JSON cannot hold.
var yamlCases = map[string]string{
	"object":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b}\ndata:\n  k: v\n",
	"ints":          "a: 1\nb: -2\nc: 0x1F\nd: 017\ne: 0o17\nf: +3\ng: 1_000\nh: 9223372036854775807\ni: -9223372036854775808\n",
	"big ints":      "a: 9223372036854775808\nb: 18446744073709551615\nc: 18446744073709551616\nd: -9223372036854775809\n",
	"floats":        "l: 1152921504606846976.0\na: 1.5\nb: 3.0\nc: -0.0\nd: 1e21\ne: 1e20\nf: 1.0e+3\ng: 0.000001\nh: 0.0000001\ni: 6.02e23\nj: 9.223372036854775807e18\nk: -9.223372036854775808e18\n",
	"specials":      "a: .inf\n",
	"nan":           "a: .nan\n",
	"neg inf":       "a: -.Inf\n",
	"bools":         "a: true\nb: false\nc: yes\nd: no\ne: on\nf: off\ng: y\nh: True\n",
	"nulls":         "a: null\nb: ~\nc:\nd: Null\n",
	"strings":       "a: \"1\"\nb: '0x1F'\nc: \"line\\nbreak\"\nd: \"\\u2028\"\ne: >\n  folded\n  text\nf: |\n  literal\n",
	"timestamps":    "a: 2001-12-14t21:59:43.10-05:00\nb: 2002-12-14\nc: !!timestamp 2002-12-14\n",
	"binary":        "a: !!binary aGVsbG8=\n",
	"escaped byte":  "a: \"\\xff\"\n",
	"invalid utf-8": "a: !!binary /w==\n",
	"int keys":      "1: a\n2: b\n",
	"colliding":     "1: a\n\"1\": b\n",
	"bool keys":     "true: a\n",
	"float keys":    "1.5: a\n",
	"null key":      "~: a\n",
	"anchors":       "base: &b {x: 1, y: [1, 2]}\nuse: *b\nmerged:\n  <<: *b\n  z: 3\n",
	"duplicates":    "a: 1\na: 2\n",
	"list":          "- 1\n- a\n- {b: c}\n",
	"scalar":        "just a string\n",
	"null":          "null\n",
	"empty":         "",
	"comment":       "# nothing\n",
	"malformed":     "a: [1, 2\n",
	"tabs":          "a:\n\t- b\n",
	"nested":        "a:\n  b:\n    c:\n      - d: [1, 2.5, \"3\", {e: null}]\n",
	"tagged":        "a: !!str 1\nb: !!int \"2\"\nc: !!float 3\n",
	"octal string":  "a: 0o\nb: 08\nc: 1e\n",
	"huge float":    "a: 1e400\n",
	"tiny float":    "a: 1e-400\nb: 5e-324\n",
	// A mapping and lists nested 10,000 deep, the most JSON reads (maxNesting), and one more.
	"at the limit": "a: " + nested(maxNesting-1) + "\n",
	"too deep":     "a: " + nested(maxNesting) + "\n",
}

// TestYAMLIsReadAsKubectlReadsIt: every value decodeYAML reads is the value the
// round trip through JSON gives, on the cases above and on every YAML document in
// testdata; what it cannot read as that round trip does, it leaves to it.
func TestYAMLIsReadAsKubectlReadsIt(t *testing.T) {
	t.Parallel()
	fast := 0
	for name, doc := range yamlCases {
		if checkDecodeYAML(t, name, []byte(doc)) {
			fast++
		}
	}
	// What the round trip changes or refuses is left to it.
	for _, name := range []string{"specials", "nan", "neg inf", "invalid utf-8", "int keys", "colliding", "bool keys", "float keys", "null key", "big ints", "malformed", "tabs", "too deep"} {
		if _, v, ok := decodeYAML([]byte(yamlCases[name])); ok {
			t.Errorf("%s: read as %s; want it left to the round trip", name, shortly(v))
		}
	}
	if fast < len(yamlCases)/2 {
		t.Errorf("only %d of %d cases were read directly", fast, len(yamlCases))
	}
	docs := 0
	err := filepath.WalkDir("../../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) || strings.Contains(path, "templates") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range SplitDocuments(data) {
			if len(bytes.TrimSpace(doc)) > 0 && checkDecodeYAML(t, path+" document "+strconv.Itoa(i+1), doc) {
				docs++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if docs < 50 {
		t.Errorf("only %d documents of testdata were read directly", docs)
	}
}

// FuzzYAMLIsReadAsKubectlReadsIt: go test -fuzz FuzzYAMLIsReadAsKubectlReadsIt
// ./internal/render looks for a document decodeYAML reads otherwise than the round
// trip.
func FuzzYAMLIsReadAsKubectlReadsIt(f *testing.F) {
	for _, doc := range yamlCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeYAML(t, "fuzzed", data)
	})
}
