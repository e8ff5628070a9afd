package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const manifestPath = "kubernetes/runner.yaml"

// The NATS the runners connect to and the Secret their credentials come from: the names
// deploy/README.md's commands create.
const (
	natsURL     = "nats://nats:4222"
	credsSecret = "summit-runner-creds"
)

// manifest is runner.yaml decoded: one object of each kind it must hold.
type manifest struct {
	account *corev1.ServiceAccount
	deploy  *appsv1.Deployment
	policy  *networkingv1.NetworkPolicy
}

// decodeManifest decodes every YAML document into the API type its apiVersion and kind name,
// as the API server does (sigs.k8s.io/json, case-sensitive), refusing unknown and duplicate
// fields and kinds this file has no business holding. Quantities, int-or-strings and enums' Go types are checked by the
// decode itself (a "4 Gi" memory limit does not decode).
func decodeManifest(data []byte) (manifest, error) {
	var m manifest
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return m, fmt.Errorf("document %d: %v", i+1, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ServiceAccount":
			m.account = &corev1.ServiceAccount{}
			obj = m.account
		case "apps/v1 Deployment":
			m.deploy = &appsv1.Deployment{}
			obj = m.deploy
		case "networking.k8s.io/v1 NetworkPolicy":
			m.policy = &networkingv1.NetworkPolicy{}
			obj = m.policy
		default:
			return m, fmt.Errorf("document %d: unexpected apiVersion %q kind %q", i+1, tm.APIVersion, tm.Kind)
		}
		// Case-sensitive as the API server decodes (sigs.k8s.io/json): encoding/json would
		// take readOnlyRootFileSystem for readOnlyRootFilesystem, the server drops it.
		j, err := yaml.YAMLToJSONStrict([]byte(doc))
		if err != nil {
			return m, fmt.Errorf("document %d (%s): %v", i+1, tm.Kind, err)
		}
		strict, err := kjson.UnmarshalStrict(j, obj)
		if err = errors.Join(append(strict, err)...); err != nil {
			return m, fmt.Errorf("document %d (%s): %v", i+1, tm.Kind, err)
		}
	}
	if m.account == nil || m.deploy == nil || m.policy == nil {
		return m, errors.New("runner.yaml must hold a ServiceAccount, a Deployment and a NetworkPolicy")
	}
	return m, nil
}

func stripComments(doc string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")
}

// checkManifest returns every rule runner.yaml breaks: those of the API server that decoding
// does not apply, then this project's for a runner (no inbound port, non-root, bounded, the
// credentials only from the Secret, egress to NATS and DNS only).
func checkManifest(data []byte) []string {
	m, err := decodeManifest(data)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	fail := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	for _, om := range []metav1.ObjectMeta{m.account.ObjectMeta, m.deploy.ObjectMeta, m.policy.ObjectMeta, m.deploy.Spec.Template.ObjectMeta} {
		if om.Name != "" {
			for _, e := range validation.IsDNS1123Subdomain(om.Name) {
				fail("name %q: %s", om.Name, e)
			}
		}
		for k, v := range om.Labels {
			for _, e := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
				fail("label %s=%s: %s", k, v, e)
			}
		}
	}

	d := m.deploy
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 1 {
		fail("the Deployment runs no replica")
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	switch {
	case d.Spec.Selector == nil || err != nil || sel.Empty():
		fail("the Deployment's selector is missing or invalid: %v", err)
	case !sel.Matches(labels.Set(d.Spec.Template.Labels)):
		// The API server refuses this ("selector does not match template labels").
		fail("the Deployment's selector %s does not match its pod template's labels %v", sel, d.Spec.Template.Labels)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != m.account.Name {
		fail("the pod runs as service account %q, not the file's %q", pod.ServiceAccountName, m.account.Name)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		fail("the pod mounts a service account token (a runner needs no Kubernetes API)")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		fail("the pod shares a host namespace")
	}
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		fail("the pod does not run as a non-root uid")
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		fail("the pod has no seccomp profile")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	if len(pod.Containers) != 1 {
		fail("the pod has %d containers, want the runner alone", len(pod.Containers))
	}
	for _, c := range pod.Containers {
		if len(c.Ports) > 0 {
			fail("container %s declares ports %v: a runner dials out and listens on none", c.Name, c.Ports)
		}
		if c.Image == "" {
			fail("container %s has no image", c.Name)
		}
		req, lim := c.Resources.Requests, c.Resources.Limits
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			if q, ok := req[r]; !ok || q.IsZero() {
				fail("container %s requests no %s", c.Name, r)
			}
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			q, ok := lim[r]
			if !ok {
				fail("container %s has no %s limit", c.Name, r)
			} else if q.Cmp(req[r]) < 0 {
				// The API server refuses a limit below its request.
				fail("container %s: %s limit %s is below its request %s", c.Name, r, q.String(), req.Name(r, "").String())
			}
		}
		sc := c.SecurityContext
		switch {
		case sc == nil:
			fail("container %s has no securityContext", c.Name)
		default:
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				fail("container %s allows privilege escalation (no_new_privs is off)", c.Name)
			}
			if sc.Privileged != nil && *sc.Privileged {
				fail("container %s is privileged", c.Name)
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				fail("container %s has a writable root filesystem", c.Name)
			}
			if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
				fail("container %s does not drop every capability", c.Name)
			}
		}
		mounts := map[string]string{}
		for _, vm := range c.VolumeMounts {
			if _, ok := volumes[vm.Name]; !ok {
				fail("container %s mounts volume %q, which the pod does not have", c.Name, vm.Name)
			}
			mounts[vm.Name] = vm.MountPath
		}
		env := map[string]bool{}
		for _, e := range c.Env {
			env[e.Name] = true
		}
		for _, a := range append(slices.Clone(c.Command), c.Args...) {
			for _, ref := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(a, -1) {
				if !env[ref[1]] {
					// Kubernetes leaves an undefined $(VAR) as it is: the runner would register as "$(POD_NAME)".
					fail("container %s: argument %q names $(%s), which its env does not define", c.Name, a, ref[1])
				}
			}
		}
		flags := runnerFlags(c.Args)
		if flags["--nats"] != natsURL {
			fail("container %s: --nats is %q, want the Service %s", c.Name, flags["--nats"], natsURL)
		}
		creds := flags["--creds"]
		cv, ok := volumes["creds"]
		switch {
		case !ok || cv.Secret == nil || cv.Secret.SecretName != credsSecret:
			fail("the credentials volume is not the Secret %s", credsSecret)
		case creds == "":
			fail("container %s has no --creds", c.Name)
		default:
			var paths []string
			for _, it := range cv.Secret.Items {
				paths = append(paths, strings.TrimSuffix(mounts["creds"], "/")+"/"+it.Path)
			}
			if !slices.Contains(paths, creds) {
				fail("container %s: --creds %s is none of the Secret's mounted files %v", c.Name, creds, paths)
			}
			if m := cv.Secret.DefaultMode; m == nil || *m&0o007 != 0 {
				fail("the credentials are readable by others (defaultMode)")
			}
		}
	}

	p := m.policy
	if ps, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector); err != nil || ps.Empty() || !ps.Matches(labels.Set(d.Spec.Template.Labels)) {
		fail("the NetworkPolicy does not select the runner pods")
	}
	if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || len(p.Spec.Ingress) > 0 {
		fail("the NetworkPolicy admits ingress")
	}
	if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		fail("the NetworkPolicy does not restrict egress")
	}
	natsOK := false
	for _, r := range p.Spec.Egress {
		for _, port := range r.Ports {
			if port.Port != nil && port.Port.IntValue() == 4222 && len(r.To) > 0 {
				natsOK = true
			}
		}
		if len(r.Ports) == 0 {
			fail("an egress rule allows every port")
		}
	}
	if !natsOK {
		fail("no egress rule reaches NATS on 4222 (from a selected peer)")
	}
	return bad
}

// runnerFlags reads `runner --flag value ...` arguments into a map (every flag of summit
// runner in the manifest takes a value).
func runnerFlags(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		if name, val, ok := strings.Cut(args[i], "="); ok && strings.HasPrefix(name, "--") {
			out[name] = val
		} else if strings.HasPrefix(args[i], "--") && i+1 < len(args) {
			out[args[i]] = args[i+1]
			i++
		}
	}
	return out
}

// TestKubernetesManifest checks runner.yaml offline: kubectl is not here, and its
// `apply --dry-run=client --validate=false` only decodes; this decodes strictly into the
// k8s.io/api types and applies the rules above.
func TestKubernetesManifest(t *testing.T) {
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if bad := checkManifest(data); len(bad) > 0 {
		t.Errorf("%s:\n  %s", manifestPath, strings.Join(bad, "\n  "))
	}
	m, err := decodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.deploy.Spec.Template.Spec.Containers[0].Args[0]; got != "runner" {
		t.Errorf("the container runs summit %q, want summit runner", got)
	}
}

// TestKubernetesManifestRefusesBreakage: each edit, made to the real file, must be caught,
// so the check above can fail.
func TestKubernetesManifestRefusesBreakage(t *testing.T) {
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, old, new, want string }{
		{"misspelt field", "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true", `unknown field "spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem"`},
		{"duplicate field", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: true\n            readOnlyRootFilesystem: false", `key "readOnlyRootFilesystem" already set`},
		{"bad quantity", "memory: 4Gi", "memory: 4 Gi", "quantities must match"},
		{"selector mismatch", "    matchLabels:\n      app.kubernetes.io/name: summit-runner\n  strategy", "    matchLabels:\n      app.kubernetes.io/name: summit\n  strategy", "does not match its pod template"},
		{"inbound port", "          imagePullPolicy: IfNotPresent\n", "          imagePullPolicy: IfNotPresent\n          ports:\n            - containerPort: 8080\n", "listens on none"},
		{"root", "runAsNonRoot: true\n        runAsUser: 65532", "runAsNonRoot: false\n        runAsUser: 65532", "non-root"},
		{"escalation", "  allowPrivilegeEscalation: false", "  allowPrivilegeEscalation: true", "privilege escalation"},
		{"undefined variable", "- $(POD_NAME)", "- $(NODE_NAME)", "names $(NODE_NAME)"},
		{"creds path", "- /etc/summit/creds/runner.creds", "- /etc/summit/runner.creds", "none of the Secret's mounted files"},
		{"other secret", "secretName: " + credsSecret, "secretName: nats-creds", "not the Secret"},
		{"no limit", "            limits:\n              memory: 4Gi\n", "            limits:\n", "no memory limit"},
		{"open ingress", "  ingress: []\n", "  ingress:\n    - {}\n", "admits ingress"},
		{"bad label", "app.kubernetes.io/name: summit-runner\nautomount", "app.kubernetes.io/name: summit runner\nautomount", "label app.kubernetes.io/name=summit runner"},
		{"unknown kind", "kind: ServiceAccount", "kind: ServiceAcount", `unexpected apiVersion "v1" kind "ServiceAcount"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(c.old)) {
				t.Fatalf("runner.yaml no longer contains %q: update the case", c.old)
			}
			bad := strings.Join(checkManifest(bytes.Replace(data, []byte(c.old), []byte(c.new), 1)), "\n")
			if !strings.Contains(bad, c.want) {
				t.Errorf("the edit is not refused with %q; got:\n%s", c.want, bad)
			}
		})
	}
}

// TestDockerfile: the image copies the binary .ci/release-build names and runs as the uid the
// manifest's securityContext expects.
func TestDockerfile(t *testing.T) {
	df, err := os.ReadFile("kubernetes/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := os.ReadFile("../.ci/release-build")
	if err != nil {
		t.Fatal(err)
	}
	// release-build: bin=$out/summit-$version-$os-$arch
	if !bytes.Contains(rb, []byte("bin=$out/summit-$version-$os-$arch")) {
		t.Fatal(".ci/release-build no longer names its binaries summit-VERSION-OS-ARCH: update the Dockerfile and this test")
	}
	if !bytes.Contains(df, []byte("COPY dist/summit-${VERSION}-linux-${TARGETARCH} /usr/local/bin/summit")) {
		t.Error("the Dockerfile does not copy release-build's binary (dist/summit-VERSION-linux-ARCH)")
	}
	m, err := decodeManifest(must(os.ReadFile(manifestPath)))
	if err != nil {
		t.Fatal(err)
	}
	uid := *m.deploy.Spec.Template.Spec.SecurityContext.RunAsUser
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^USER %d:%d$`, uid, uid)).Match(df) {
		t.Errorf("the Dockerfile's USER is not the manifest's runAsUser %d", uid)
	}
	if !regexp.MustCompile(`(?m)^ENTRYPOINT \["/usr/local/bin/summit"\]$`).Match(df) {
		t.Error("the Dockerfile's ENTRYPOINT is not summit (the manifest's args start with runner)")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
