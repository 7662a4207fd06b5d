package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/drift-gitops/drift/internal/config"
	"github.com/drift-gitops/drift/internal/source"
)

// Where a pull request's trusted configuration comes from (--config-from).
const (
	ConfigFromBase = "base"
	ConfigFromHead = "head"
)

// Config is drift.yaml as the run uses it.
type Config struct {
	// Use is what the run uses (nil: no drift.yaml); on a pull request, the change's
	// targets with the trusted part from the base.
	Use *config.Config
	// Base is the base's own drift.yaml (nil when there is none or no base).
	Base *config.Config
	// Refused names targets that cannot be previewed, with why.
	Refused map[string]string
	// Change is the file on both sides, for the report, when they differ.
	Change *config.Change
}

// ConfigSource says where drift.yaml is read from.
type ConfigSource struct {
	// File is --config: a path inside the repository (read from the refs) or a file
	// of the runner's, trusted whole; "" for drift.yaml at the root.
	File string
	// From is ConfigFromBase or ConfigFromHead; BaseRef names the base for the report.
	From    string
	BaseRef string
	// Warnf reports what the run goes on without.
	Warnf func(format string, args ...any)
	// Known is what drift.yaml may name that config does not define (the risk rules).
	Known config.Known
}

// LoadConfig reads drift.yaml (or the --config file). On a pull request (base set)
// what decides how objects are checked comes from the base ref, unless From is
// ConfigFromHead (a trusted run).
func LoadConfig(repo *source.Repo, head, base *source.Snapshot, src ConfigSource) (*Config, error) {
	name := config.FileName
	if src.File != "" {
		inRepo, err := repo.Path(src.File)
		if err != nil {
			data, err := os.ReadFile(src.File)
			if err != nil {
				return nil, fmt.Errorf("--config: %w", err)
			}
			cfg, err := config.Parse(src.File, data, src.Known)
			return &Config{Use: cfg, Base: cfg}, err
		}
		name = inRepo
	}
	headData, headCfg, err := configIn(head, name, src.Known)
	if err != nil {
		return nil, err
	}
	if base == nil {
		return &Config{Use: headCfg}, nil
	}
	baseData, baseCfg, err := configIn(base, name, src.Known)
	if src.From == ConfigFromHead {
		if err != nil && src.Warnf != nil {
			// Only the base's selection uses the base's file here: every entry counts as changed.
			src.Warnf("%v: every target counts as changed", err)
		}
		return &Config{Use: headCfg, Base: baseCfg}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: drift reads the rules and clusters of a pull request from its base; fix the file on the base branch (or, for a trusted local run, use --config-from head)", err)
	}
	c := &Config{Base: baseCfg}
	tr := config.Trusted(baseCfg, headCfg)
	c.Use, c.Refused = tr.Config, tr.Refused
	if string(baseData) != string(headData) || len(tr.NotApplied) > 0 {
		c.Change = &config.Change{File: name, TrustedFrom: src.BaseRef, Base: string(baseData), Head: string(headData), NotApplied: tr.NotApplied}
	}
	return c, nil
}

// configIn reads a configuration file from a snapshot; nil when it has none.
func configIn(snap *source.Snapshot, name string, known config.Known) ([]byte, *config.Config, error) {
	data, err := fs.ReadFile(snap.FS, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read %s in %s: %w", name, snap.Describe(), err)
	}
	cfg, err := config.Parse(name, data, known)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", snap.Describe(), err)
	}
	return data, cfg, nil
}

// FailOn is the failOn of the drift.yaml the run uses (nil: none).
func (c *Config) FailOn() []string {
	if c == nil || c.Use == nil {
		return nil
	}
	return c.Use.FailOn
}

// DisabledRisks are the risk rules the drift.yaml the run uses switches off
// (risks.disable; nil: none).
func (c *Config) DisabledRisks() map[string]bool {
	if c == nil || c.Use == nil || c.Use.Risks == nil {
		return nil
	}
	out := map[string]bool{}
	for _, r := range c.Use.Risks.Disable {
		out[r] = true
	}
	return out
}
