package ephemeral

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drift-gitops/drift/internal/testenv"
)

// TestServerHoldsAsManyServicesAsAClusterDoes: the ephemeral server's Service range is
// a /12, so a repository with thousands of Services seeds; an address far outside
// envtest's default /24 (10.0.0.0/24) is taken.
func TestServerHoldsAsManyServicesAsAClusterDoes(t *testing.T) {
	testenv.Require(t)
	srv, err := Start(context.Background(), os.Getenv("KUBEBUILDER_ASSETS"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "far", Namespace: "default"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.100.20.30", Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a cluster IP in %s was refused: %v", ServiceCIDR, err)
	}
}
