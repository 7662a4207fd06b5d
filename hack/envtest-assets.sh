#!/usr/bin/env bash
# Prints the directory of etcd and kube-apiserver for KUBEBUILDER_ASSETS, installing them
# first when missing. The script is the one drift setup runs.
exec bash "$(dirname "$0")/../internal/ephemeral/install.sh" "$@"
