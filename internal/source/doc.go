// Package source opens a local git repository with go-git, resolves the refs users
// type, and hands out a read-only file system of one commit (read straight from git
// objects) or of the work tree as it is on disk.
package source
