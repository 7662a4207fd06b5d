package discover

import "encoding/json"

// The fields of Argo CD's Application that decide what is rendered and how it is
// applied (argoproj.io/v1alpha1; github.com/argoproj/argo-cd pkg/apis/application).

type application struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec applicationSpec `json:"spec"`
}

type applicationSpec struct {
	Source            *appSource     `json:"source"`
	Sources           []appSource    `json:"sources"`
	Destination       appDestination `json:"destination"`
	SyncPolicy        *syncPolicy    `json:"syncPolicy"`
	IgnoreDifferences []ignoreDiff   `json:"ignoreDifferences"`
}

type appSource struct {
	RepoURL        string          `json:"repoURL"`
	Path           string          `json:"path"`
	TargetRevision string          `json:"targetRevision"`
	Chart          string          `json:"chart"`
	Ref            string          `json:"ref"`
	Helm           *appHelm        `json:"helm"`
	Kustomize      *appKustomize   `json:"kustomize"`
	Directory      *appDirectory   `json:"directory"`
	Plugin         json.RawMessage `json:"plugin"`
}

type appHelm struct {
	ValueFiles              []string          `json:"valueFiles"`
	Values                  string            `json:"values"`
	ValuesObject            map[string]any    `json:"valuesObject"`
	Parameters              []helmParameter   `json:"parameters"`
	FileParameters          []json.RawMessage `json:"fileParameters"`
	ReleaseName             string            `json:"releaseName"`
	Namespace               string            `json:"namespace"`
	IgnoreMissingValueFiles bool              `json:"ignoreMissingValueFiles"`
	SkipCrds                bool              `json:"skipCrds"`
	SkipTests               bool              `json:"skipTests"`
	SkipSchemaValidation    bool              `json:"skipSchemaValidation"`
	PassCredentials         bool              `json:"passCredentials"`
	KubeVersion             string            `json:"kubeVersion"`
	APIVersions             []string          `json:"apiVersions"`
	Version                 string            `json:"version"`
}

type helmParameter struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	ForceString bool   `json:"forceString"`
}

type appKustomize struct {
	NamePrefix        string            `json:"namePrefix"`
	NameSuffix        string            `json:"nameSuffix"`
	Images            []string          `json:"images"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	Namespace         string            `json:"namespace"`
	Components        []string          `json:"components"`
	Patches           []kustomizePatch  `json:"patches"`
	Replicas          []json.RawMessage `json:"replicas"`
	Version           string            `json:"version"`
	ForceCommonLabels bool              `json:"forceCommonLabels"`
	// LabelWithoutSelector and the envsubst of annotations change what is built in
	// ways drift does not repeat: reported as notes.
	LabelWithoutSelector      bool     `json:"labelWithoutSelector"`
	CommonAnnotationsEnvsubst bool     `json:"commonAnnotationsEnvsubst"`
	IgnoreMissingComponents   bool     `json:"ignoreMissingComponents"`
	LabelIncludeTemplates     bool     `json:"labelIncludeTemplates"`
	ForceCommonAnnotations    bool     `json:"forceCommonAnnotations"`
	APIVersions               []string `json:"apiVersions"`
	KubeVersion               string   `json:"kubeVersion"`
}

type kustomizePatch struct {
	Path    string          `json:"path"`
	Patch   string          `json:"patch"`
	Target  *patchSelector  `json:"target"`
	Options map[string]bool `json:"options"`
}

type patchSelector struct {
	Group              string `json:"group"`
	Version            string `json:"version"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	Namespace          string `json:"namespace"`
	LabelSelector      string `json:"labelSelector"`
	AnnotationSelector string `json:"annotationSelector"`
}

type appDirectory struct {
	Recurse bool            `json:"recurse"`
	Include string          `json:"include"`
	Exclude string          `json:"exclude"`
	Jsonnet json.RawMessage `json:"jsonnet"`
}

type appDestination struct {
	Server    string `json:"server"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type syncPolicy struct {
	Automated *struct {
		Prune    bool `json:"prune"`
		SelfHeal bool `json:"selfHeal"`
	} `json:"automated"`
	SyncOptions []string `json:"syncOptions"`
}

type ignoreDiff struct {
	Group                 string   `json:"group"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name"`
	Namespace             string   `json:"namespace"`
	JSONPointers          []string `json:"jsonPointers"`
	JQPathExpressions     []string `json:"jqPathExpressions"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers"`
}
