// Package dryrun is the engine that asks the cluster what applying rendered objects
// would do: it plans the objects (identities, namespaces, duplicates, kinds the
// cluster does not serve, bytes that are not base64, aggregated APIs held back), then
// sends each one as its applier does (applier.Applier.Send) with dryRun=All, in a
// bounded pool, reading the live copies by GET or by LIST (internal/kube), and
// returns one Result per object. What the change itself creates (namespaces, CRDs)
// is pending for the objects that need it. A server-side apply never carries the live
// resourceVersion, so a change since the read is told from the answer's
// resourceVersion, and the object read and sent again.
package dryrun
