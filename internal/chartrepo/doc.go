// Package chartrepo fetches Helm charts from chart repositories (an index.yaml over
// HTTP) and OCI registries, for runs over content a pull request's author controls:
//
//   - Only repositories the trusted configuration allows are reached (drift.yaml's
//     charts.allow, read from the base of a pull request), and a redirect anywhere
//     else is refused. Every URL is read by repourl: an entry allows the same
//     scheme, host and port and the paths below its own at a segment boundary, and
//     a URL a server could normalize into another path is refused before any
//     request.
//   - A version must be exact unless ranges are allowed (--resolve-ranges); what a
//     range resolved to is returned, for the report.
//   - Every archive is verified: against the digest its repository's index gives
//     (an index without one is refused), or the OCI manifest's layer digest, which
//     the registry client checks as it pulls.
//   - Verified archives are kept in a content-addressed cache (sha256/<hex>.tgz)
//     with a record per repository, chart and version, so a cached chart needs no
//     request and --offline renders from the cache alone; a cached archive is
//     verified again before use.
//   - Credentials come from the runner's Helm configuration (repositories.yaml,
//     registry config.json), never from the repository, and never appear in an
//     error. A repository's credentials go only to URLs under that repository, a
//     registry's only to that registry (host and port) and its token service; any
//     redirect drops them unless every hop stays under the repository.
package chartrepo
