package discover

// The fields of Flux's Kustomization (kustomize.toolkit.fluxcd.io/v1), HelmRelease
// (helm.toolkit.fluxcd.io/v2) and sources (source.toolkit.fluxcd.io/v1) that decide
// what is rendered and how it is applied.

type fluxKustomization struct {
	Spec struct {
		Path            string          `json:"path"`
		SourceRef       crossRef        `json:"sourceRef"`
		TargetNamespace string          `json:"targetNamespace"`
		NamePrefix      string          `json:"namePrefix"`
		NameSuffix      string          `json:"nameSuffix"`
		Patches         []fluxPatch     `json:"patches"`
		Images          []fluxImage     `json:"images"`
		Components      []string        `json:"components"`
		PostBuild       *postBuild      `json:"postBuild"`
		DependsOn       []crossRef      `json:"dependsOn"`
		Prune           bool            `json:"prune"`
		KubeConfig      *kubeConfigRef  `json:"kubeConfig"`
		CommonMetadata  *commonMetadata `json:"commonMetadata"`
		Force           bool            `json:"force"`
		Suspend         bool            `json:"suspend"`
		Decryption      *struct {
			Provider string `json:"provider"`
		} `json:"decryption"`
	} `json:"spec"`
}

type crossRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
}

type fluxPatch struct {
	Patch  string         `json:"patch"`
	Target *patchSelector `json:"target"`
}

type fluxImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag"`
	Digest  string `json:"digest"`
}

type postBuild struct {
	Substitute     map[string]string `json:"substitute"`
	SubstituteFrom []valuesRef       `json:"substituteFrom"`
}

type valuesRef struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	ValuesKey  string `json:"valuesKey"`
	TargetPath string `json:"targetPath"`
	Optional   bool   `json:"optional"`
}

type kubeConfigRef struct {
	SecretRef *struct {
		Name string `json:"name"`
		Key  string `json:"key"`
	} `json:"secretRef"`
	ConfigMapRef *struct {
		Name string `json:"name"`
	} `json:"configMapRef"`
}

type commonMetadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type fluxHelmRelease struct {
	Spec struct {
		Chart *struct {
			Spec struct {
				Chart       string   `json:"chart"`
				Version     string   `json:"version"`
				SourceRef   crossRef `json:"sourceRef"`
				ValuesFiles []string `json:"valuesFiles"`
				ValuesFile  string   `json:"valuesFile"`
			} `json:"spec"`
		} `json:"chart"`
		ChartRef         *crossRef      `json:"chartRef"`
		Suspend          bool           `json:"suspend"`
		ReleaseName      string         `json:"releaseName"`
		TargetNamespace  string         `json:"targetNamespace"`
		StorageNamespace string         `json:"storageNamespace"`
		Values           map[string]any `json:"values"`
		ValuesFrom       []valuesRef    `json:"valuesFrom"`
		DependsOn        []crossRef     `json:"dependsOn"`
		KubeConfig       *kubeConfigRef `json:"kubeConfig"`
		Install          *struct {
			CreateNamespace bool `json:"createNamespace"`
		} `json:"install"`
		PostRenderers []map[string]any `json:"postRenderers"`
	} `json:"spec"`
}

type gitRepository struct {
	Spec struct {
		URL    string `json:"url"`
		Ignore string `json:"ignore"`
		Ref    *struct {
			Branch string `json:"branch"`
			Tag    string `json:"tag"`
			Semver string `json:"semver"`
			Name   string `json:"name"`
			Commit string `json:"commit"`
		} `json:"ref"`
	} `json:"spec"`
}
