package benchcli

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/patchbench/patchbench/cmd/internal/cli"
	"github.com/patchbench/patchbench/runner"
)

// k8sJobOptions are the flags of "k8s job".
type k8sJobOptions struct {
	shards, parallelism int
	image               string
	resultsPVC          string
	resultsDir          string
	secret              string
	name, namespace     string
	cpu, memory         string
	backoffPerIndex     int
	merge               bool
	pullPolicy          string
}

// imageUID is the user the Dockerfile's image runs as.
const imageUID = 10001

// pvcMount is where --results-pvc is mounted in the pods.
const pvcMount = "/results"

// shardableRuns are the benchmark commands that take --shard and --out.
var shardableRuns = [][]string{{"diffxyz", "run"}, {"swe", "eval"}, {"loc", "run"}, {"ape", "run"}, {"ape", "judge"}}

func newK8sCommand(sio cli.Stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: cli.FullShort("k8s"),
		Args:  ArgsUsage(cobra.NoArgs),
	}
	cmd.AddCommand(newK8sJobCommand(sio))
	return cmd
}

func newK8sJobCommand(sio cli.Stdio) *cobra.Command {
	var o k8sJobOptions
	cmd := &cobra.Command{
		Use:   "job --shards N --image IMG (--results-pvc NAME | --results-dir PATH) [flags] BENCH-ARGS...",
		Short: "Print an Indexed Job that runs a benchmark in N shards (and, with --merge, the Job that merges them)",
		Long: `Print a Kubernetes manifest (YAML) of a batch/v1 Job in Indexed
completion mode: N pods (at most --parallelism at a time), each running

    patchbench BENCH-ARGS... --shard env/N --out RESULTS/NAME/shard-$(JOB_COMPLETION_INDEX)

so that pod i runs shard i+1 of N (see --shard) into its own directory of
the shared results volume. BENCH-ARGS is a benchmark run as on the command
line: diffxyz run, swe eval, loc run, ape run or ape judge with its flags,
without --out and --shard (the Job sets them). Its paths (dataset,
repositories, caches) are paths inside the pod: put them in the image or on
the results volume. The k8s job flags come first; BENCH-ARGS start at the
benchmark's name (or after "--").

The results volume is a PersistentVolumeClaim mounted at /results
(--results-pvc; ReadWriteMany, since the pods may run on several nodes) or a
directory of the nodes, mounted at the same path (--results-dir: an
object-store or NFS mount present on every node). API keys come from a
Secret (--secret: each key becomes an environment variable, e.g.
OPENAI_API_KEY); they are never written into the manifest, and BENCH-ARGS
that carry a key are refused.

Each index is retried --backoff-limit-per-index times on its own. When the
Job is complete, print the merge Job with the same arguments and --merge:
one pod that runs patchbench merge --out RESULTS/NAME/merged over the N
shard directories. Or run that merge anywhere the volume is mounted.

    patchbench k8s job --shards 8 --image registry.example/patchbench:1 \
        --results-pvc bench-results --secret model-keys \
        diffxyz run --dataset /data/diffxyz.jsonl --model gpt-4.1 > job.yaml
    kubectl apply -f job.yaml
    kubectl wait --for=condition=complete --timeout=24h job/patchbench-diffxyz-run
    patchbench k8s job --merge ...same arguments... | kubectl apply -f -

Exit status: 0 printed; 2 usage error.`,
		Args: ArgsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := k8sManifest(o, args)
			if err != nil {
				return cli.Usage(err)
			}
			_, err = sio.Out.Write(out)
			return err
		},
	}
	f := cmd.Flags()
	// BENCH-ARGS carry flags of their own (swe eval has --image too):
	// everything from the benchmark's name on is theirs.
	f.SetInterspersed(false)
	f.IntVar(&o.shards, "shards", 0, "number of shards `N` (the Job's completions)")
	f.IntVar(&o.parallelism, "parallelism", 0, "pods running at once (default N)")
	f.StringVar(&o.image, "image", "", "container `IMAGE` with patchbench on PATH (see the Dockerfile)")
	f.StringVar(&o.resultsPVC, "results-pvc", "", "PersistentVolumeClaim `NAME` for the results, mounted at /results")
	f.StringVar(&o.resultsDir, "results-dir", "", "results directory `PATH` of the nodes (hostPath), mounted at the same path")
	f.StringVar(&o.secret, "secret", "", "Secret `NAME` whose keys become environment variables (API keys)")
	f.StringVar(&o.name, "job-name", "", "Job `NAME`, also the run's directory on the volume (default patchbench-BENCH-CMD)")
	f.StringVar(&o.namespace, "namespace", "", "`NAMESPACE` of the Jobs (default: kubectl's)")
	f.StringVar(&o.cpu, "cpu", "2", "CPU request and limit per pod")
	f.StringVar(&o.memory, "memory", "4Gi", "memory request and limit per pod")
	f.IntVar(&o.backoffPerIndex, "backoff-limit-per-index", 2, "retries of one shard before it counts as failed")
	f.StringVar(&o.pullPolicy, "pull-policy", string(corev1.PullIfNotPresent), "image pull policy: Always, IfNotPresent or Never")
	f.BoolVar(&o.merge, "merge", false, "print the Job that merges the shards instead")
	return cmd
}

// dnsLabel is what a Job name must be (RFC 1123 label, shorter: the Job
// controller appends the index to pod names).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`)

// k8sManifest returns the YAML of the shard Job (or with o.merge the merge
// Job) for the benchmark command args.
func k8sManifest(o k8sJobOptions, args []string) ([]byte, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	var sub []string
	for _, s := range shardableRuns {
		if len(args) >= 2 && args[0] == s[0] && args[1] == s[1] {
			sub = s
		}
	}
	if sub == nil {
		names := make([]string, len(shardableRuns))
		for i, s := range shardableRuns {
			names[i] = strings.Join(s, " ")
		}
		return nil, fmt.Errorf("k8s job: BENCH-ARGS %q: want a benchmark run: %s", strings.Join(args, " "), strings.Join(names, ", "))
	}
	for _, a := range args[2:] {
		name, _, _ := strings.Cut(a, "=")
		switch {
		case name == "--out" || name == "--shard":
			return nil, fmt.Errorf("k8s job: BENCH-ARGS set %s: the Job sets it for each shard", name)
		case strings.HasPrefix(a, "sk-"): // OpenAI's and Anthropic's key prefix
			return nil, fmt.Errorf("k8s job: BENCH-ARGS hold what looks like an API key (%s): give keys with --secret", a[:min(len(a), 6)]+"...")
		}
	}
	switch {
	case o.shards < 1:
		return nil, errors.New("k8s job: --shards N (N ≥ 1) is required")
	case o.image == "":
		return nil, errors.New("k8s job: --image is required")
	case (o.resultsPVC == "") == (o.resultsDir == ""):
		return nil, errors.New("k8s job: give one of --results-pvc NAME and --results-dir PATH")
	case o.resultsDir != "" && !path.IsAbs(o.resultsDir):
		return nil, fmt.Errorf("k8s job: --results-dir %s: want an absolute path", o.resultsDir)
	case o.parallelism < 0 || o.backoffPerIndex < 0:
		return nil, errors.New("k8s job: --parallelism and --backoff-limit-per-index must not be negative")
	}
	if o.parallelism == 0 || o.parallelism > o.shards {
		o.parallelism = o.shards
	}
	switch corev1.PullPolicy(o.pullPolicy) {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return nil, fmt.Errorf("k8s job: --pull-policy %q: want Always, IfNotPresent or Never", o.pullPolicy)
	}
	if o.name == "" {
		o.name = "patchbench-" + sub[0] + "-" + sub[1]
	}
	if !dnsLabel.MatchString(o.name) {
		return nil, fmt.Errorf("k8s job: --job-name %q: want lower-case letters, digits and '-', at most 52 characters", o.name)
	}
	cpu, err := resource.ParseQuantity(o.cpu)
	if err != nil {
		return nil, fmt.Errorf("k8s job: --cpu %q: %w", o.cpu, err)
	}
	mem, err := resource.ParseQuantity(o.memory)
	if err != nil {
		return nil, fmt.Errorf("k8s job: --memory %q: %w", o.memory, err)
	}

	mount, volume := pvcMount, corev1.Volume{Name: "results"}
	if o.resultsPVC != "" {
		volume.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.resultsPVC}
	} else {
		mount = path.Clean(o.resultsDir)
		volume.HostPath = &corev1.HostPathVolumeSource{Path: mount, Type: ptr(corev1.HostPathDirectoryOrCreate)}
	}
	runDir := path.Join(mount, o.name)
	container := corev1.Container{
		Name:            "patchbench",
		Image:           o.image,
		ImagePullPolicy: corev1.PullPolicy(o.pullPolicy),
		Command:         []string{cli.ProgramName},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: mount}},
	}
	if o.secret != "" {
		container.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.secret}}}}
	}
	labels := map[string]string{"app.kubernetes.io/name": "patchbench", "patchbench.dev/run": o.name}
	job := batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: o.namespace, Labels: labels},
	}
	// The image runs as user 10001 (see the Dockerfile); fsGroup makes a
	// claimed volume writable for it.
	pod := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Volumes: []corev1.Volume{volume},
		SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(imageUID))}}
	if o.merge {
		job.Name = o.name + "-merge"
		args := []string{"merge", "--out", path.Join(runDir, "merged")}
		for i := range o.shards {
			args = append(args, path.Join(runDir, fmt.Sprintf("shard-%d", i)))
		}
		container.Args = args
		container.EnvFrom = nil // merge calls no model
		pod.Containers = []corev1.Container{container}
		job.Spec = batchv1.JobSpec{Completions: ptr(int32(1)), BackoffLimit: ptr(int32(o.backoffPerIndex)),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod}}
	} else {
		container.Args = append(append([]string(nil), args...),
			"--shard", fmt.Sprintf("env/%d", o.shards),
			"--out", path.Join(runDir, "shard-$("+runner.IndexEnv+")"))
		// The Job controller sets the index as an annotation and (since
		// Kubernetes 1.22) as this variable; declaring it from the
		// annotation makes $(JOB_COMPLETION_INDEX) in args expand on every
		// version that has Indexed Jobs.
		container.Env = []corev1.EnvVar{{Name: runner.IndexEnv, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}}
		pod.Containers = []corev1.Container{container}
		job.Spec = batchv1.JobSpec{
			CompletionMode:       ptr(batchv1.IndexedCompletion),
			Completions:          ptr(int32(o.shards)),
			Parallelism:          ptr(int32(o.parallelism)),
			BackoffLimitPerIndex: ptr(int32(o.backoffPerIndex)),
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		}
	}
	body, err := yaml.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("k8s job: %w", err)
	}
	var head strings.Builder
	if o.merge {
		fmt.Fprintf(&head, "# Merges the %d shards of %s into %s/merged; apply once job/%s is complete.\n", o.shards, o.name, runDir, o.name)
	} else {
		fmt.Fprintf(&head, "# %d shards of: %s %s\n", o.shards, cli.ProgramName, strings.Join(args, " "))
		fmt.Fprintf(&head, "# Results: %s/shard-0 ... shard-%d. Then: kubectl wait --for=condition=complete --timeout=24h job/%s\n", runDir, o.shards-1, o.name)
		fmt.Fprintf(&head, "# and apply the merge Job (the same patchbench k8s job command with --merge).\n")
	}
	return append([]byte(head.String()), body...), nil
}

func ptr[T any](v T) *T { return &v }
