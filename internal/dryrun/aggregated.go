package dryrun

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drift-gitops/drift/internal/reason"
)

func aggregatedError(gv schema.GroupVersion, service string) *Message {
	return &Message{Reason: reason.AggregatedAPI, Message: fmt.Sprintf(
		"%s is served by an aggregated API server (service %s), not by the kube-apiserver: such servers have been seen to persist dry-run writes, so drift did not send it. If this server honours dryRun, set dryRunAggregatedAPIs: true on the target in drift.yaml",
		gv.String(), service)}
}
