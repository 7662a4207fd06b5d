// Package dryrun asks the cluster what applying rendered objects would do: for each
// object it reads the live object and sends a server-side apply with dryRun=All pinned
// to the live resourceVersion, in a bounded pool, and returns one Result per object.
package dryrun
