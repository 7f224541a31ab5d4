// Package controller proves inferslo's controller on a real API server:
// k8s.io/apiextensions-apiserver's test server over an in-process etcd
// (go.etcd.io/etcd/server/v3/embed), with the InferenceSLO CRD and the
// pinned KEDA and prometheus-operator CRDs installed. The reconciler's
// objects must be accepted with fieldValidation=Strict and equal what
// `inferslo compile` writes. It is a module of its own so the API server
// and etcd never reach inferslo's module.
package controller
