// Package deploy holds no code: it is the home of summit's deployment files, and its tests check
// them offline, so a manifest or a unit that would be refused fails CI rather than a deployment.
//
//   - kubernetes/runner.yaml: runners as a Deployment that dials out to the NATS Service
//     nats:4222 (no inbound port), with a ServiceAccount and an egress-only NetworkPolicy. Checked
//     by decoding every document into the k8s.io/api type its apiVersion and kind name with
//     unknown and duplicate fields refused (what `kubectl apply --dry-run=client` decodes with,
//     stricter than its --validate=false), then the API server's own rules that decoding does
//     not apply (names, labels, the selector matching the pod template) and this project's
//     (non-root, no ports, resource bounds, the credentials only from the Secret).
//   - kubernetes/Dockerfile: the runner image from a release binary (.ci/release-build).
//   - systemd/summit-runner.service and runner.env: a hardened unit; checked by
//     `systemd-analyze verify` (any complaint fails) and by parsing it for the hardening it must
//     keep.
//
// The commands in README.md run these files; cmd/summit's TestDeployREADME checks that every
// file they name exists and that every `summit runner` flag here is one the binary knows.
package deploy
