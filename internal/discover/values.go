package discover

import (
	"regexp"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// unescapedComma is a comma --set would split at.
var unescapedComma = regexp.MustCompile(`([^\\]),`)

// setValue sets name to value in values as `helm --set name=value` does (with
// forceString, --set-string), its commas escaped as Argo CD escapes a parameter's.
func setValue(values map[string]any, name, value string, forceString bool) error {
	arg := name + "=" + unescapedComma.ReplaceAllString(value, `$1\,`)
	if forceString {
		return strvals.ParseIntoString(arg, values)
	}
	return strvals.ParseInto(arg, values)
}

// resID is a patch target's identity.
func resID(group, version, kind, name, namespace string) resid.ResId {
	return resid.ResId{Gvk: resid.Gvk{Group: group, Version: version, Kind: kind}, Name: name, Namespace: namespace}
}
