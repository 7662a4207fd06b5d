package appset

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// paramSelector is a generator's selector over its flattened parameters, as the
// controller's utils.LabelSelectorAsSelector builds it: label selector rules, but
// values may be anything (a server URL), keys must be qualified names.
type paramSelector struct {
	reqs []requirement
}

type requirement struct {
	key    string
	op     string // In, NotIn, Exists, DoesNotExist
	values []string
}

// readParamSelector reads a generator's selector; nil when it has none (an empty
// one selects every set).
func readParamSelector(v any) (*paramSelector, error) {
	if v == nil {
		return nil, nil
	}
	m, err := object(v, "selector")
	if err != nil {
		return nil, err
	}
	var ls metav1.LabelSelector
	if err := decodeInto(m, &ls); err != nil {
		return nil, err
	}
	s := &paramSelector{}
	for k, val := range ls.MatchLabels {
		if err := validKey(k); err != nil {
			return nil, err
		}
		s.reqs = append(s.reqs, requirement{key: k, op: "In", values: []string{val}})
	}
	for _, ex := range ls.MatchExpressions {
		if err := validKey(ex.Key); err != nil {
			return nil, err
		}
		r := requirement{key: ex.Key, values: ex.Values}
		switch ex.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(ex.Values) == 0 {
				return nil, fmt.Errorf("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(ex.Values) != 0 {
				return nil, fmt.Errorf("values: Invalid value: %v: values set must be empty for exists and does not exist", ex.Values)
			}
		default:
			return nil, fmt.Errorf("%q is not a valid pod selector operator", ex.Operator)
		}
		r.op = string(ex.Operator)
		s.reqs = append(s.reqs, r)
	}
	return s, nil
}

func validKey(k string) error {
	if errs := validation.IsQualifiedName(k); len(errs) != 0 {
		return fmt.Errorf("key: Invalid value: %q: %s", k, strings.Join(errs, "; "))
	}
	return nil
}

// matches says whether a flattened parameter set meets every requirement.
func (s *paramSelector) matches(set map[string]string) bool {
	for _, r := range s.reqs {
		v, has := set[r.key]
		switch r.op {
		case "In":
			if !has || !slices.Contains(r.values, v) {
				return false
			}
		case "NotIn":
			if has && slices.Contains(r.values, v) {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}
