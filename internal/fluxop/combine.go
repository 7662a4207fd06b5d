package fluxop

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/adler32"
	"strings"
	"unicode"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// maxPermutations is the operator's bound on the Permute strategy's input sets.
const maxPermutations = 10000

// inputSource is an object providing input sets: the ResourceSet itself (its
// spec.inputs) or a ResourceSetInputProvider (its exported inputs).
type inputSource struct {
	apiVersion, kind, name, namespace string
	inputs                            []map[string]any
}

// inputID is the operator's short, opaque id of an input set: the Adler-32
// checksum of a string, in decimal.
func inputID(s string) string {
	return fmt.Sprintf("%v", adler32.Checksum([]byte(s)))
}

// decodeInput turns an input set into the values the operator's templates see:
// each value JSON-encoded then decoded as Kubernetes decodes it (whole numbers
// as int64, others as float64).
func decodeInput(in map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(in))
	for k, v := range in {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		var data any
		if err := utiljson.Unmarshal(raw, &data); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = data
	}
	return out, nil
}

// withProvider is a source's input sets, each with the built-in provider field
// naming the source (overriding any provider an input set has).
func (s *inputSource) withProvider() []map[string]any {
	for _, in := range s.inputs {
		in["provider"] = map[string]any{
			"apiVersion": s.apiVersion,
			"kind":       s.kind,
			"name":       s.name,
			"namespace":  s.namespace,
		}
	}
	return s.inputs
}

// flatten is the Flatten strategy: every source's input sets, one after another.
func flatten(sources []*inputSource) []map[string]any {
	var out []map[string]any
	for _, s := range sources {
		out = append(out, s.withProvider()...)
	}
	return out
}

// normalizeKey is a source's name as a template key under Permute: lower case,
// spaces and punctuation to '_', other characters outside [a-z0-9] dropped, and
// the non-empty '_'-separated words joined with '_'.
func normalizeKey(key string) string {
	key = strings.Map(func(r rune) rune {
		r = unicode.ToLower(r)
		if unicode.IsSpace(r) || unicode.IsPunct(r) {
			return '_'
		}
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			return r
		}
		return -1
	}, key)
	var words []string
	for w := range strings.SplitSeq(key, "_") {
		if w != "" {
			words = append(words, w)
		}
	}
	return strings.Join(words, "_")
}

// permute is the Permute strategy: the Cartesian product of the sources' input
// sets (the first source's varying slowest), each set placed under its source's
// normalized name and the product given an id made of the source names and
// indexes. Sources without input sets are left out unless includeEmpty, when
// one makes the product empty. More than maxPermutations sets is an error.
func permute(ctx context.Context, sources []*inputSource, includeEmpty bool) ([]map[string]any, error) {
	type scoped struct {
		key  string
		sets []map[string]any
	}
	var scopes []scoped
	var expected uint64
	for _, s := range sources {
		sets := s.withProvider()
		if !includeEmpty && len(sets) == 0 {
			continue
		}
		if len(scopes) == 0 {
			expected = uint64(len(sets))
		} else {
			expected *= uint64(len(sets))
		}
		if expected > maxPermutations {
			return nil, fmt.Errorf("failed to get inputs from %s/%s: adding provider '%s' with %d inputs would exceed the maximum allowed permutations. max: %d, got: %d",
				s.kind, s.name, s.name, len(sets), maxPermutations, expected)
		}
		key := normalizeKey(s.name)
		if key == "" {
			return nil, fmt.Errorf("failed to get inputs from %s/%s: normalized provider name is empty: '%s'", s.kind, s.name, s.name)
		}
		scopes = append(scopes, scoped{key: key, sets: sets})
	}
	out := []map[string]any{}
	if len(scopes) == 0 {
		return out, nil
	}
	for _, sc := range scopes {
		if len(sc.sets) == 0 {
			return out, nil
		}
	}
	idx := make([]int, len(scopes))
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		perm := map[string]any{}
		ids := make([]string, len(scopes))
		for i, sc := range scopes {
			perm[sc.key] = sc.sets[idx[i]]
			ids[i] = fmt.Sprintf("%s=%d", sc.key, idx[i])
		}
		perm["id"] = inputID(strings.Join(ids, "/"))
		out = append(out, perm)
		// Advance the last source fastest, carrying into the ones before it.
		i := len(scopes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(scopes[i].sets) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}
