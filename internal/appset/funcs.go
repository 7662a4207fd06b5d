package appset

import (
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/gosimple/slug"
	"sigs.k8s.io/yaml"
)

// baseTemplate is the template every goTemplate string is parsed from (cloned):
// named "base" and with the controller's functions, so that its error messages
// read as the controller's.
var baseTemplate = template.New("base").Funcs(templateFuncs())

// templateFuncs are the functions goTemplate offers (applicationset/utils): Sprig
// without the ones that read the environment or the network, and Argo CD's own.
func templateFuncs() template.FuncMap {
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	delete(funcs, "getHostByName")
	funcs["normalize"] = sanitizeName
	funcs["slugify"] = slugifyName
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["fromYamlArray"] = fromYAMLArray
	return funcs
}

var invalidDNSNameChars = regexp.MustCompile("[^-a-z0-9.]")

// sanitizeName is Argo CD's SanitizeName (the normalize function, the
// nameNormalized and *Normalized parameters): lower case, characters other than
// [-a-z0-9.] replaced by '-', at most 253 characters, '-' and '.' trimmed from
// both ends.
func sanitizeName(name string) string {
	name = strings.ToLower(name)
	name = invalidDNSNameChars.ReplaceAllString(name, "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// slugMu serializes slugify: the slug package's options are package variables,
// which the controller sets on every call.
var slugMu sync.Mutex

// slugifyName is Argo CD's SlugifyName: slugify [maxSize [smartTruncate]] name,
// defaults 50 and true. A wrong argument type panics as the controller's does;
// text/template turns the panic into an error of the template.
func slugifyName(args ...any) string {
	maxSize := 50
	smartTruncate := true
	name := ""
	for i, arg := range args {
		switch i {
		case len(args) - 1:
			name = arg.(string)
		case 0:
			maxSize = arg.(int)
		case 1:
			smartTruncate = arg.(bool)
		}
	}
	slugMu.Lock()
	defer slugMu.Unlock()
	slug.EnableSmartTruncate = smartTruncate
	slug.MaxLength = maxSize
	return slug.Make(sanitizeName(name))
}

// toYAML is the toYaml function: YAML without its final newline.
func toYAML(v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}

// fromYAML is the fromYaml function: a YAML object.
func fromYAML(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// fromYAMLArray is the fromYamlArray function: a YAML list.
func fromYAMLArray(s string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, err
	}
	return a, nil
}
