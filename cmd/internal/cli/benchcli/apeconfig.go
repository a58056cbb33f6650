package benchcli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/patchbench/patchbench/llm"
)

// apeConfig is the part of APE-Bench's config.yaml (configs/config.yaml)
// that has a meaning here: the generation model and its sampling, the
// judge, and k's ratio. Other keys are ignored.
type apeConfig struct {
	Generation struct {
		Models []struct {
			Name    string         `json:"name"`
			Configs []apeGenConfig `json:"configs"`
		} `json:"models"`
	} `json:"generation"`
	Judgement struct {
		ModelName   string   `json:"model_name"`
		Temperature *float64 `json:"temperature"`
		NResponses  int      `json:"n_responses"`
		MaxWorkers  int      `json:"max_workers"`
	} `json:"judgement"`
	// DataCollection holds the thinking budget of the "@thinking" models.
	DataCollection struct {
		ThinkingBudgetTokens int `json:"thinking_budget_tokens"`
	} `json:"data_collection"`
	Evaluation struct {
		KRatio float64 `json:"k_ratio"`
	} `json:"evaluation"`
}

type apeGenConfig struct {
	Temperature *float64 `json:"temperature"`
	NResponses  int      `json:"n_responses"`
	MaxWorkers  int      `json:"max_workers"`
}

// thinkingSuffix marks APE-Bench's models asked with extended thinking.
const thinkingSuffix = "@thinking"

func readApeConfig(path string) (*apeConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var c apeConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("--config: %s: %w", path, err)
	}
	return &c, nil
}

// configSetter sets the flags of f that the command line did not give
// from a config file's values.
type configSetter struct {
	f    *pflag.FlagSet
	path string
}

func (s configSetter) set(flag, key, value string) error {
	if s.f.Changed(flag) || value == "" {
		return nil
	}
	if err := s.f.Set(flag, value); err != nil {
		return fmt.Errorf("--config: %s: %s: %w", s.path, key, err)
	}
	return nil
}

func (s configSetter) setInt(flag, key string, v int) error {
	if v == 0 {
		return nil
	}
	return s.set(flag, key, strconv.Itoa(v))
}

func (s configSetter) setFloat(flag, key string, v *float64) error {
	if v == nil {
		return nil
	}
	return s.set(flag, key, strconv.FormatFloat(*v, 'g', -1, 64))
}

// configModel turns a config's model name into a --model one: a name with
// a provider is used as it is; "NAME@thinking" is NAME with extended
// thinking. APE-Bench's own names (deepseek-v3-250324, ...) name no
// provider: the config must say which.
func configModel(path, key, name string) (model string, thinking bool, err error) {
	name, thinking = strings.CutSuffix(name, thinkingSuffix)
	if !strings.Contains(name, "/") && name != llm.ProviderReference {
		return "", false, fmt.Errorf("--config: %s: %s %q names no provider: write it as openai/NAME or anthropic/NAME (the name the provider's API knows), or give the flag", path, key, name)
	}
	return name, thinking, nil
}

// applyJudge sets the judge flags (--judge-model, --judge-temperature,
// --judge-n, --judge-thinking-budget; --workers too when workers is set)
// from the config's judgement section.
func (c *apeConfig) applyJudge(s configSetter, workers bool) error {
	j := c.Judgement
	if j.ModelName != "" && !s.f.Changed("judge-model") {
		m, thinking, err := configModel(s.path, "judgement.model_name", j.ModelName)
		if err != nil {
			return err
		}
		if err := s.set("judge-model", "judgement.model_name", m); err != nil {
			return err
		}
		if thinking {
			if c.DataCollection.ThinkingBudgetTokens == 0 {
				return fmt.Errorf("--config: %s: judgement.model_name %q asks for thinking, and data_collection.thinking_budget_tokens gives no budget", s.path, j.ModelName)
			}
			if err := s.setInt("judge-thinking-budget", "data_collection.thinking_budget_tokens", c.DataCollection.ThinkingBudgetTokens); err != nil {
				return err
			}
			// APE-Bench sends temperature 1 with thinking, whatever
			// judgement.temperature says.
			one := 1.0
			j.Temperature = &one
		}
	}
	if err := s.setFloat("judge-temperature", "judgement.temperature", j.Temperature); err != nil {
		return err
	}
	if err := s.setInt("judge-n", "judgement.n_responses", j.NResponses); err != nil {
		return err
	}
	if workers {
		return s.setInt("workers", "judgement.max_workers", j.MaxWorkers)
	}
	return nil
}

// applyRun sets ape run's flags from the config: the generation model
// (the one --model names, else the config's only one) and its sampling
// (its only config, else its one with n_responses above 1, as pass@k
// needs), the judge, and k's ratio.
func (c *apeConfig) applyRun(s configSetter, model string) error {
	models := c.Generation.Models
	idx := -1
	for i, m := range models {
		name, _ := strings.CutSuffix(m.Name, thinkingSuffix)
		if model != "" && (name == model || strings.HasSuffix(model, "/"+name)) {
			idx = i
		}
	}
	switch {
	case idx < 0 && model == "" && len(models) == 1:
		idx = 0
	case idx < 0 && model == "" && len(models) > 1:
		var names []string
		for _, m := range models {
			names = append(names, m.Name)
		}
		return fmt.Errorf("--config: %s lists %d generation models (%s); ape run runs one: give --model", s.path, len(models), strings.Join(names, ", "))
	}
	if idx >= 0 {
		m := models[idx]
		if model == "" {
			name, thinking, err := configModel(s.path, "generation.models.name", m.Name)
			if err != nil {
				return err
			}
			if thinking {
				return fmt.Errorf("--config: %s: generation model %q asks for thinking, which ape run's candidates are not asked with", s.path, m.Name)
			}
			if err := s.set("model", "generation.models.name", name); err != nil {
				return err
			}
		}
		var pick *apeGenConfig
		switch {
		case len(m.Configs) == 1:
			pick = &m.Configs[0]
		case len(m.Configs) > 1:
			for i := range m.Configs {
				if m.Configs[i].NResponses > 1 {
					if pick != nil {
						return fmt.Errorf("--config: %s: model %s has several configs with n_responses above 1; give --n and --temperature", s.path, m.Name)
					}
					pick = &m.Configs[i]
				}
			}
		}
		if pick != nil {
			if err := s.setFloat("temperature", "generation.models.configs.temperature", pick.Temperature); err != nil {
				return err
			}
			if err := s.setInt("n", "generation.models.configs.n_responses", pick.NResponses); err != nil {
				return err
			}
			if err := s.setInt("workers", "generation.models.configs.max_workers", pick.MaxWorkers); err != nil {
				return err
			}
		}
	}
	if err := c.applyJudge(s, false); err != nil {
		return err
	}
	if c.Evaluation.KRatio != 0 {
		return s.set("k-ratio", "evaluation.k_ratio", strconv.FormatFloat(c.Evaluation.KRatio, 'g', -1, 64))
	}
	return nil
}
