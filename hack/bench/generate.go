package main

import (
	"fmt"
	"strings"

	"github.com/drift-gitops/drift/internal/gitfixture"
)

// namespaces the objects are spread over; perKind objects of each of 5 kinds go in each.
const namespaces = 10

type counts struct{ total, modified, added int }

// generate writes the base commit (tag base) and the head commit (main): of the
// namespaces x 5 x perKind objects at head, every tenth is modified and every
// twentieth is new.
func generate(dir string, perKind int) (counts, error) {
	r, err := gitfixture.Init(dir)
	if err != nil {
		return counts{}, err
	}
	base, head := map[string]string{}, map[string]string{}
	var c counts
	i := 0
	for n := 0; n < namespaces; n++ {
		ns := fmt.Sprintf("bench-%02d", n)
		nsDoc := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
		base["apps/"+ns+"/namespace.yaml"] = nsDoc
		head["apps/"+ns+"/namespace.yaml"] = nsDoc
		for _, kind := range []string{"configmap", "deployment", "service", "secret", "serviceaccount"} {
			for k := 0; k < perKind; k++ {
				i++
				name := fmt.Sprintf("%s-%03d", kind, k)
				path := fmt.Sprintf("apps/%s/%s.yaml", ns, name)
				added := i%20 == 0
				modified := i%10 == 5
				c.total++
				if added {
					c.added++
				} else {
					base[path] = manifest(kind, ns, name, 1)
				}
				version := 1
				if modified {
					version = 2
					c.modified++
				}
				head[path] = manifest(kind, ns, name, version)
			}
		}
	}
	if _, err := r.CommitFiles(base, "bench: base"); err != nil {
		return c, err
	}
	if _, err := r.Git("tag", "base"); err != nil {
		return c, err
	}
	for p := range base {
		if _, ok := head[p]; !ok {
			head[p] = ""
		}
	}
	if _, err = r.CommitFiles(head, "bench: head"); err != nil {
		return c, err
	}
	// Packed, as a clone is (the Action's checkout, a CI job's): git reads a file of
	// a pack in a fraction of the time it reads a loose object.
	_, err = r.Git("gc", "-q")
	return c, err
}

func manifest(kind, ns, name string, version int) string {
	v := fmt.Sprint(version)
	meta := fmt.Sprintf("metadata:\n  name: %s\n  namespace: %s\n  labels:\n    app: %s\n    version: \"%s\"\n", name, ns, name, v)
	switch kind {
	case "configmap":
		return "apiVersion: v1\nkind: ConfigMap\n" + meta + "data:\n  setting: \"value-" + v + "\"\n  other: " + strings.Repeat("x", 64) + "\n"
	case "secret":
		return "apiVersion: v1\nkind: Secret\n" + meta + "stringData:\n  token: \"token-" + v + "\"\n"
	case "serviceaccount":
		return "apiVersion: v1\nkind: ServiceAccount\n" + meta
	case "service":
		return "apiVersion: v1\nkind: Service\n" + meta + "spec:\n  selector:\n    app: " + name + "\n  ports:\n  - port: 80\n    targetPort: " + fmt.Sprint(8080+version) + "\n"
	default:
		return "apiVersion: apps/v1\nkind: Deployment\n" + meta + "spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: " + name + "\n  template:\n    metadata:\n      labels:\n        app: " + name + "\n    spec:\n      containers:\n      - name: app\n        image: nginx:1." + fmt.Sprint(24+version) + "\n"
	}
}
