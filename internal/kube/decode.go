package kube

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// onePassSerializer is the dynamic client's negotiated serializer with a JSON decoder
// that reads an answer into an Unstructured, or a list into an UnstructuredList, in
// one pass. client-go's decoder reads each answer three times (its kind, the JSON's
// validity, then the object), and a list's items twice more (the whole list into
// maps, thrown away, then each item again): a third of drift's CPU at 10,000 objects
// went to reading answers. The objects it gives are the same, down to the Go type of
// every number (int64 for whole numbers, as client-go decodes them): the test holds
// it to client-go's own decoding. Anything else (a Status, into nothing) is decoded by
// client-go's decoder.
type onePassSerializer struct {
	runtime.NegotiatedSerializer
}

func (s onePassSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := s.NegotiatedSerializer.SupportedMediaTypes()
	out := make([]runtime.SerializerInfo, len(infos))
	for i, info := range infos {
		if info.MediaType == runtime.ContentTypeJSON && info.Serializer != nil {
			info.Serializer = onePassDecoder{info.Serializer}
		}
		out[i] = info
	}
	return out
}

// onePassDecoder decodes an Unstructured or an UnstructuredList in one pass, and
// anything else with the serializer it wraps (which also encodes).
type onePassDecoder struct {
	runtime.Serializer
}

func (d onePassDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var err error
	switch obj := into.(type) {
	case *unstructured.Unstructured:
		err = decodeObject(data, obj)
	case *unstructured.UnstructuredList:
		err = decodeList(data, obj)
	default:
		return d.Serializer.Decode(data, defaults, into)
	}
	if err != nil {
		return nil, nil, err
	}
	gvk := into.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		return nil, &gvk, runtime.NewMissingKindErr(string(data))
	}
	return into, &gvk, nil
}

// decodeObject reads one object as unstructured's own decoding does: numbers that are
// whole as int64, the rest as float64.
func decodeObject(data []byte, obj *unstructured.Unstructured) error {
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return err
	}
	obj.Object = m
	return nil
}

// decodeList reads a list as unstructured's decoding does (items without a kind and
// apiVersion take them from the list, as a typed list's items come), in one pass: the
// items are the maps decoded with the list.
func decodeList(data []byte, list *unstructured.UnstructuredList) error {
	m := map[string]any{}
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return err
	}
	items, _ := m["items"].([]any)
	if v, ok := m["items"]; ok && v != nil && items == nil {
		return fmt.Errorf("the list's items are a %T, not a list", v)
	}
	delete(m, "items")
	list.Object = m
	apiVersion, kind := list.GetAPIVersion(), strings.TrimSuffix(list.GetKind(), "List")
	list.Items = make([]unstructured.Unstructured, len(items))
	for i, v := range items {
		obj, ok := v.(map[string]any)
		if !ok && v != nil { // null is an item of no fields, as client-go reads it
			return fmt.Errorf("item %d of the list is a %T, not an object", i, v)
		}
		item := &list.Items[i]
		item.Object = obj
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(kind)
			item.SetAPIVersion(apiVersion)
		}
	}
	return nil
}
