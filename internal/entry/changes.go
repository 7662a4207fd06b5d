package entry

import (
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/drift-gitops/drift/internal/report"
)

// listKeys are the fields that identify an element of a list of objects, tried in
// order, as the API's merge keys do (containers and volumes by name, ports by number,
// mounts by path).
var listKeys = []string{"name", "containerPort", "port", "mountPath", "devicePath", "ip", "type", "key"}

// fieldChanges lists what differs between two normalized objects, sorted by path as
// the diff shows them.
func fieldChanges(before, after map[string]any) []report.FieldChange {
	var out []report.FieldChange
	walkChanges("", before, after, true, true, &out)
	return out
}

func walkChanges(path string, before, after any, hasBefore, hasAfter bool, out *[]report.FieldChange) {
	switch {
	case !hasBefore:
		*out = append(*out, report.FieldChange{Path: path, Op: report.OpAdd, After: after})
		return
	case !hasAfter:
		*out = append(*out, report.FieldChange{Path: path, Op: report.OpRemove, Before: before})
		return
	case reflect.DeepEqual(before, after):
		return
	}
	bm, bok := before.(map[string]any)
	am, aok := after.(map[string]any)
	if bok && aok {
		keys := make([]string, 0, len(bm)+len(am))
		for k := range bm {
			keys = append(keys, k)
		}
		for k := range am {
			if _, ok := bm[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			bv, inB := bm[k]
			av, inA := am[k]
			walkChanges(joinField(path, k), bv, av, inB, inA, out)
		}
		return
	}
	bl, bok := before.([]any)
	al, aok := after.([]any)
	if bok && aok {
		if key := listKey(bl, al); key != "" {
			walkKeyed(path, key, bl, al, out)
			return
		}
		if len(bl) == len(al) {
			for i := range bl {
				walkChanges(path+"["+strconv.Itoa(i)+"]", bl[i], al[i], true, true, out)
			}
			return
		}
	}
	*out = append(*out, report.FieldChange{Path: path, Op: report.OpChange, Before: before, After: after})
}

// walkKeyed matches two lists' elements by key: the after list's order, then what
// was removed.
func walkKeyed(path, key string, before, after []any, out *[]report.FieldChange) {
	index := func(items []any) map[string]any {
		m := make(map[string]any, len(items))
		for _, it := range items {
			m[keyOf(it, key)] = it
		}
		return m
	}
	was := index(before)
	is := index(after)
	for _, it := range after {
		k := keyOf(it, key)
		old, ok := was[k]
		walkChanges(path+"["+key+"="+k+"]", old, it, ok, true, out)
	}
	for _, it := range before {
		k := keyOf(it, key)
		if _, ok := is[k]; !ok {
			walkChanges(path+"["+key+"="+k+"]", it, nil, true, false, out)
		}
	}
}

// listKey is the field that identifies every element of both lists uniquely, or "".
func listKey(lists ...[]any) string {
	for _, key := range listKeys {
		ok := true
		for _, items := range lists {
			seen := map[string]bool{}
			for _, it := range items {
				m, isMap := it.(map[string]any)
				if !isMap {
					return ""
				}
				v, has := m[key]
				if !has {
					ok = false
					break
				}
				k := scalarString(v)
				if seen[k] {
					ok = false
					break
				}
				seen[k] = true
			}
			if !ok {
				break
			}
		}
		if ok && (len(lists[0]) > 0 || len(lists[1]) > 0) {
			return key
		}
	}
	return ""
}

func keyOf(it any, key string) string {
	m, _ := it.(map[string]any)
	return scalarString(m[key])
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// joinField appends a map key to a path: ".key" when it is a plain name,
// `["key"]` otherwise (an annotation such as "app.kubernetes.io/name").
func joinField(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// whatChanged says in a few words what a modification changes: images, replicas, data
// keys, then how many other fields.
func whatChanged(kind string, changes []report.FieldChange) string {
	var images, replicas, parts []string
	var others []report.FieldChange
	var add, remove, change, rest int
	for _, c := range changes {
		switch {
		case isImage(c.Path) && c.Op == report.OpChange:
			images = append(images, "image "+imageChange(c.Before, c.After))
		case c.Path == "spec.replicas" && c.Op == report.OpChange:
			replicas = append(replicas, "replicas "+brief(c.Before)+" → "+brief(c.After))
		case (kind == "ConfigMap" || kind == "Secret") && isDataKey(c.Path):
			switch c.Op {
			case report.OpAdd:
				add++
			case report.OpRemove:
				remove++
			default:
				change++
			}
		default:
			rest++
			others = append(others, c)
		}
	}
	parts = append(images, replicas...)
	if add+remove+change > 0 {
		var d []string
		for _, n := range []struct {
			n    int
			sign string
		}{{add, "+"}, {remove, "−"}, {change, "~"}} {
			if n.n > 0 {
				d = append(d, n.sign+strconv.Itoa(n.n))
			}
		}
		parts = append(parts, "data keys "+strings.Join(d, " "))
	}
	if len(parts) == 0 && rest <= 2 && allScalarChanges(others) {
		for _, c := range others {
			parts = append(parts, c.Path+" "+brief(c.Before)+" → "+brief(c.After))
		}
		return strings.Join(parts, ", ")
	}
	if rest > 0 {
		more := ""
		if len(parts) > 0 {
			more = "more "
		}
		parts = append(parts, report.Plural(rest, more+"field", more+"fields"))
	}
	return strings.Join(parts, ", ")
}

// allScalarChanges reports whether every change replaces one scalar with another.
func allScalarChanges(cs []report.FieldChange) bool {
	for _, c := range cs {
		if c.Op != report.OpChange || scalarString(c.Before) == "" || scalarString(c.After) == "" || len(c.Path) > 60 {
			return false
		}
	}
	return true
}

func isImage(path string) bool {
	return strings.HasSuffix(path, ".image") && strings.Contains(path, "ontainers[")
}

func isDataKey(path string) bool {
	for _, p := range []string{"data", "binaryData", "stringData"} {
		if strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
			return true
		}
	}
	return false
}

// imageChange shows an image change short: "web:1.4 → 1.5" when only the tag moves.
func imageChange(before, after any) string {
	b, a := brief(before), brief(after)
	bi, ai := strings.LastIndex(b, ":"), strings.LastIndex(a, ":")
	if bi > 0 && ai > 0 && b[:bi] == a[:ai] && !strings.Contains(b[bi:], "/") && !strings.Contains(a[ai:], "/") {
		return b + " → " + a[ai+1:]
	}
	return b + " → " + a
}

// brief is a scalar as a summary line shows it, cut at 60 characters.
func brief(v any) string {
	s := scalarString(v)
	if s == "" && v != nil {
		s = "…"
	}
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "…"
	}
	return s
}
