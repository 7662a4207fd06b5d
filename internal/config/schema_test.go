package config

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

const schemaPath = "../../docs/drift.schema.json"

func loadSchema(t *testing.T) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("drift.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("drift.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s, doc
}

// yamlKeys lists the keys a struct decodes, inline structs flattened.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			out = append(out, yamlKeys(f.Type)...)
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func props(t *testing.T, node map[string]any) []string {
	t.Helper()
	if node["additionalProperties"] != false {
		t.Errorf("schema object %v allows unknown keys; drift.yaml does not", node["description"])
	}
	var out []string
	for k := range node["properties"].(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSchemaDescribesEveryKey keeps docs/drift.schema.json true to the Go types.
func TestSchemaDescribesEveryKey(t *testing.T) {
	_, doc := loadSchema(t)
	defs := doc["definitions"].(map[string]any)
	target := defs["target"].(map[string]any)
	for typ, node := range map[reflect.Type]map[string]any{
		reflect.TypeOf(Config{}):     doc,
		reflect.TypeOf(Defaults{}):   doc["properties"].(map[string]any)["defaults"].(map[string]any),
		reflect.TypeOf(Target{}):     target,
		reflect.TypeOf(HelmTarget{}): target["properties"].(map[string]any)["helm"].(map[string]any),
		reflect.TypeOf(IgnoreRule{}): defs["ignoreRule"].(map[string]any),
		reflect.TypeOf(MaskRule{}):   defs["maskRule"].(map[string]any),
	} {
		if got, want := props(t, node), yamlKeys(typ); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: schema has %v, the Go type decodes %v", typ.Name(), got, want)
		}
	}
}

func validate(t *testing.T, s *jsonschema.Schema, y []byte) error {
	t.Helper()
	js, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

// TestSchemaAcceptsWhatParseAcceptsAndRefusesTheRest checks the schema against the
// test repository's drift.yaml, every example in docs/config.md, and bad files.
func TestSchemaAcceptsWhatParseAcceptsAndRefusesTheRest(t *testing.T) {
	s, _ := loadSchema(t)
	good := map[string][]byte{}
	data, err := os.ReadFile("../../testdata/platform/drift.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good["testdata/platform/drift.yaml"] = data
	md, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := regexp.MustCompile("(?s)```yaml\n# drift.yaml\n(.*?)```").FindAllSubmatch(md, -1)
	if len(examples) == 0 {
		t.Fatal("docs/config.md has no ```yaml block starting with # drift.yaml")
	}
	for i, m := range examples {
		good["docs/config.md example "+string(rune('1'+i))] = m[1]
	}
	for name, y := range good {
		if _, err := Parse("drift.yaml", y, known); err != nil {
			t.Errorf("%s: Parse: %v", name, err)
		}
		if err := validate(t, s, y); err != nil {
			t.Errorf("%s: schema: %v", name, err)
		}
	}
	for _, bad := range []string{
		"targets:\n  - {name: a, path: a, contxt: x}\n",
		"targets:\n  - {name: a}\n",
		"targets:\n  - {name: a, path: a, renderer: jsonnet}\n",
		"targets: [{name: a, path: a}]\nignore:\n  - {kind: Deployment}\n",
		"targets: [{name: a, path: a}]\nmask:\n  - {kind: ConfigMap, paths: [data]}\n",
		"version: 2\ntargets: [{name: a, path: a}]\n",
	} {
		if validate(t, s, []byte(bad)) == nil {
			t.Errorf("schema accepts %q", bad)
		}
		if _, err := Parse("drift.yaml", []byte(bad), known); err == nil {
			t.Errorf("Parse accepts %q", bad)
		}
	}
}
