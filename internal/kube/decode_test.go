package kube

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// jsonDecoders are client-go's dynamic JSON decoder and drift's one-pass decoder over
// it.
func jsonDecoders(t *testing.T) (clientGo, onePass runtime.Decoder) {
	t.Helper()
	ns := dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer
	for _, s := range []runtime.NegotiatedSerializer{ns, onePassSerializer{ns}} {
		info, ok := runtime.SerializerInfoForMediaType(s.SupportedMediaTypes(), runtime.ContentTypeJSON)
		if !ok {
			t.Fatal("no JSON serializer")
		}
		d := s.DecoderToVersion(info.Serializer, nil)
		if clientGo == nil {
			clientGo = d
		} else {
			onePass = d
		}
	}
	if _, ok := onePass.(onePassDecoder); !ok {
		t.Fatalf("the JSON decoder is %T, want onePassDecoder", onePass)
	}
	return clientGo, onePass
}

// The one-pass decoder gives what client-go's decoder gives, object for object and
// number type for number type, for objects and lists, and the same errors.
func TestOnePassDecodingIsClientGos(t *testing.T) {
	clientGo, onePass := jsonDecoders(t)
	object := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"42","generation":3,"labels":{"a\u002eb":"\u00e9\"q"}},
		"spec":{"replicas":3,"ratio":0.5,"big":9007199254740993,"exp":1e3,"neg":-7,"nothing":null,"flag":true,"list":[1,2.5,"x",{"y":[]}],"empty":{}}}`
	for _, tc := range []struct {
		name, data string
		list       bool
	}{
		{name: "an object", data: object},
		{name: "a typed list, items without kind", list: true,
			data: `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"9","continue":"abc","remainingItemCount":12},"items":[{"metadata":{"name":"a"},"data":{"k":"v"}},{"metadata":{"name":"b"},"binaryData":{"n":"AA=="},"x":1}]}`},
		{name: "a list whose items have kinds", list: true,
			data: `{"apiVersion":"v1","kind":"List","metadata":{},"items":[` + object + `,{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}]}`},
		{name: "an item with only a kind", list: true,
			data: `{"apiVersion":"v1","kind":"ConfigMapList","items":[{"kind":"Odd","metadata":{"name":"a"}}]}`},
		{name: "an empty list", list: true, data: `{"apiVersion":"v1","kind":"SecretList","metadata":{"resourceVersion":"1"},"items":[]}`},
		{name: "a list with null items", list: true, data: `{"apiVersion":"v1","kind":"SecretList","items":null}`},
		{name: "a list of no kind", list: true, data: `{"apiVersion":"v1","items":[]}`},
		{name: "an object of no kind", data: `{"apiVersion":"v1","metadata":{"name":"a"}}`},
		{name: "not JSON", data: `{"apiVersion":"v1",`},
		{name: "a list that is not JSON", list: true, data: `{"kind":"List","items":[{]}`},
		{name: "a null item", list: true, data: `{"apiVersion":"v1","kind":"ConfigMapList","items":[null,{"metadata":{"name":"a"}}]}`},
		{name: "items that are not a list", list: true, data: `{"apiVersion":"v1","kind":"List","items":{"a":1}}`},
		{name: "an item that is not an object", list: true, data: `{"apiVersion":"v1","kind":"List","items":[1]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newInto := func() runtime.Object {
				if tc.list {
					return &unstructured.UnstructuredList{}
				}
				return &unstructured.Unstructured{}
			}
			want, wantErr := newInto(), error(nil)
			_, _, wantErr = clientGo.Decode([]byte(tc.data), nil, want)
			got := newInto()
			_, gvk, err := onePass.Decode([]byte(tc.data), nil, got)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v; client-go's: %v", err, wantErr)
			}
			if wantErr != nil {
				if runtime.IsMissingKind(wantErr) != runtime.IsMissingKind(err) {
					t.Errorf("error %v; client-go's: %v", err, wantErr)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded\n%#v\nclient-go decodes\n%#v", got, want)
			}
			if *gvk != want.GetObjectKind().GroupVersionKind() {
				t.Errorf("kind %v, want %v", gvk, want.GetObjectKind().GroupVersionKind())
			}
		})
	}
}

// What is not decoded into an unstructured object, an error's Status first of all,
// is client-go's decoder's to decode.
func TestOnePassDecodingLeavesTheRestToClientGo(t *testing.T) {
	_, onePass := jsonDecoders(t)
	status := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nope","reason":"Forbidden","code":403}`
	out, _, err := onePass.Decode([]byte(status), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := out.(*metav1.Status); !ok || s.Reason != metav1.StatusReasonForbidden || s.Code != 403 {
		t.Errorf("decoded %#v, want the Status", out)
	}
	into := &metav1.Status{}
	if _, _, err := onePass.Decode([]byte(status), nil, into); err != nil || into.Message != "nope" {
		t.Errorf("into a Status: %#v, %v", into, err)
	}
}
