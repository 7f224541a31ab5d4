module github.com/inferslo/inferslo/ci/realcode/argo

go 1.26.0

require (
	github.com/argoproj/argo-rollouts v1.8.3
	github.com/sirupsen/logrus v1.9.3
	sigs.k8s.io/yaml v1.4.0
)

require (
	github.com/antonmedv/expr v1.15.5 // indirect
	github.com/aws/aws-sdk-go v1.44.116 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/emicklei/go-restful/v3 v3.11.0 // indirect
	github.com/go-logr/logr v1.4.1 // indirect
	github.com/go-openapi/jsonpointer v0.19.6 // indirect
	github.com/go-openapi/jsonreference v0.20.2 // indirect
	github.com/go-openapi/swag v0.22.3 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/gnostic-models v0.6.8 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/jmespath/go-jmespath v0.4.0 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/jpillora/backoff v1.0.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/mwitkow/go-conntrack v0.0.0-20190716064945-2f068394615f // indirect
	github.com/prometheus/client_golang v1.18.0 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	github.com/prometheus/common v0.47.0 // indirect
	github.com/prometheus/common/sigv4 v0.1.0 // indirect
	github.com/prometheus/procfs v0.12.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	golang.org/x/net v0.29.0 // indirect
	golang.org/x/oauth2 v0.29.0 // indirect
	golang.org/x/sys v0.25.0 // indirect
	golang.org/x/term v0.24.0 // indirect
	golang.org/x/text v0.18.0 // indirect
	golang.org/x/time v0.5.0 // indirect
	google.golang.org/protobuf v1.35.2 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/api v0.29.3 // indirect
	k8s.io/apimachinery v0.29.3 // indirect
	k8s.io/client-go v0.29.3 // indirect
	k8s.io/klog/v2 v2.110.1 // indirect
	k8s.io/kube-openapi v0.0.0-20231010175941-2dd684a91f00 // indirect
	k8s.io/kubernetes v1.29.3 // indirect
	k8s.io/utils v0.0.0-20230726121419-3b25d923346b // indirect
	sigs.k8s.io/json v0.0.0-20221116044647-bc3834ca7abd // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.4.1 // indirect
)

replace (
	k8s.io/api v0.0.0 => k8s.io/api v0.29.3
	k8s.io/apiextensions-apiserver v0.0.0 => k8s.io/apiextensions-apiserver v0.29.3
	k8s.io/apimachinery v0.0.0 => k8s.io/apimachinery v0.29.3
	k8s.io/apiserver v0.0.0 => k8s.io/apiserver v0.29.3
	k8s.io/cli-runtime v0.0.0 => k8s.io/cli-runtime v0.29.3
	k8s.io/client-go v0.0.0 => k8s.io/client-go v0.29.3
	k8s.io/cloud-provider v0.0.0 => k8s.io/cloud-provider v0.29.3
	k8s.io/cluster-bootstrap v0.0.0 => k8s.io/cluster-bootstrap v0.29.3
	k8s.io/code-generator v0.0.0 => k8s.io/code-generator v0.29.3
	k8s.io/component-base v0.0.0 => k8s.io/component-base v0.29.3
	k8s.io/component-helpers v0.0.0 => k8s.io/component-helpers v0.29.3
	k8s.io/controller-manager v0.0.0 => k8s.io/controller-manager v0.29.3
	k8s.io/cri-api v0.0.0 => k8s.io/cri-api v0.29.3
	k8s.io/csi-translation-lib v0.0.0 => k8s.io/csi-translation-lib v0.29.3
	k8s.io/kube-aggregator v0.0.0 => k8s.io/kube-aggregator v0.29.3
	k8s.io/kube-controller-manager v0.0.0 => k8s.io/kube-controller-manager v0.29.3
	k8s.io/kube-proxy v0.0.0 => k8s.io/kube-proxy v0.29.3
	k8s.io/kube-scheduler v0.0.0 => k8s.io/kube-scheduler v0.29.3
	k8s.io/kubectl v0.0.0 => k8s.io/kubectl v0.29.3
	k8s.io/kubelet v0.0.0 => k8s.io/kubelet v0.29.3
	k8s.io/legacy-cloud-providers v0.0.0 => k8s.io/legacy-cloud-providers v0.29.3
	k8s.io/metrics v0.0.0 => k8s.io/metrics v0.29.3
	k8s.io/mount-utils v0.0.0 => k8s.io/mount-utils v0.29.3
	k8s.io/pod-security-admission v0.0.0 => k8s.io/pod-security-admission v0.29.3
	k8s.io/sample-apiserver v0.0.0 => k8s.io/sample-apiserver v0.29.3
)
