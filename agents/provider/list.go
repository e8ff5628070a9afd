package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ListModels asks a provider which models it serves, with the request that costs no tokens:
// GET /models for OpenAI-compatible servers (OpenAI, vLLM, llama.cpp, LM Studio, OpenRouter,
// Ollama's /v1), GET /v1/models for Anthropic, GET /v1beta/models for Gemini, GET /api/tags
// for kind ollama. It follows the
// pagination of Anthropic and Gemini. The error says what a person can fix: a missing key, a
// refused key, an unreachable server, an endpoint that is not the API.
func ListModels(ctx context.Context, info ProviderInfo, getenv func(string) string, client *http.Client) ([]string, error) {
	if client == nil {
		client = http.DefaultClient
	}
	key := ""
	if info.KeyEnv != "" {
		key = getenv(info.KeyEnv)
	}
	if key == "" && info.Kind == "gemini" {
		key = getenv("GOOGLE_API_KEY")
	}
	needKey := info.Kind == "anthropic" || info.Kind == "gemini" || info.Kind == "openai" && info.BaseURL == builtins["openai"].BaseURL
	if key == "" && needKey {
		if info.Kind == "gemini" {
			return nil, fmt.Errorf("no key: set %s (or GOOGLE_API_KEY)", info.KeyEnv)
		}
		return nil, fmt.Errorf("no key: set %s", info.KeyEnv)
	}
	var names []string
	switch info.Kind {
	case "openai":
		var body struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := getJSON(ctx, client, strings.TrimSuffix(info.BaseURL, "/")+"/models", bearer(key), &body); err != nil {
			return nil, err
		}
		for _, m := range body.Data {
			names = append(names, m.ID)
		}
	case "anthropic":
		base := strings.TrimSuffix(orDefault(info.BaseURL, "https://api.anthropic.com"), "/")
		after := ""
		for page := 0; page < 20; page++ {
			u := base + "/v1/models?limit=1000"
			if after != "" {
				u += "&after_id=" + url.QueryEscape(after)
			}
			var body struct {
				Data []struct {
					ID string `json:"id"`
				} `json:"data"`
				HasMore bool   `json:"has_more"`
				LastID  string `json:"last_id"`
			}
			if err := getJSON(ctx, client, u, map[string]string{"x-api-key": key, "anthropic-version": "2023-06-01"}, &body); err != nil {
				return nil, err
			}
			for _, m := range body.Data {
				names = append(names, m.ID)
			}
			if !body.HasMore || body.LastID == "" {
				break
			}
			after = body.LastID
		}
	case "gemini":
		base := strings.TrimSuffix(orDefault(info.BaseURL, "https://generativelanguage.googleapis.com"), "/")
		token := ""
		for page := 0; page < 20; page++ {
			u := base + "/v1beta/models?pageSize=1000"
			if token != "" {
				u += "&pageToken=" + url.QueryEscape(token)
			}
			var body struct {
				Models []struct {
					Name string `json:"name"`
				} `json:"models"`
				Next string `json:"nextPageToken"`
			}
			if err := getJSON(ctx, client, u, map[string]string{"x-goog-api-key": key}, &body); err != nil {
				return nil, err
			}
			for _, m := range body.Models {
				names = append(names, strings.TrimPrefix(m.Name, "models/"))
			}
			if body.Next == "" {
				break
			}
			token = body.Next
		}
	case "ollama": // the native API: GET /api/tags, {"models":[{"name":"llama3:latest",…}]}
		var body struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		if err := getJSON(ctx, client, ollamaRoot(info.BaseURL)+"/api/tags", bearer(key), &body); err != nil {
			return nil, err
		}
		for _, m := range body.Models {
			names = append(names, m.Name)
		}
	default:
		return nil, fmt.Errorf("kind %q has no model list", info.Kind)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func bearer(key string) map[string]string {
	if key == "" {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + key}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// getJSON GETs u and decodes a JSON answer; anything else is an error with the server's own
// words.
func getJSON(ctx context.Context, client *http.Client, u string, headers map[string]string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("unreachable: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("reading the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := serverMessage(data)
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("the key was refused (HTTP %d: %s)", resp.StatusCode, msg)
		case http.StatusNotFound:
			return fmt.Errorf("no model list at %s (HTTP 404: %s): is base_url the API's root?", u, msg)
		}
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("the answer at %s is not a model list (%s)", u, firstBytes(data))
	}
	return nil
}

// serverMessage finds the human message in an error body of any of the common shapes.
func serverMessage(data []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case len(v.Error) > 0 && v.Error[0] == '"':
			var s string
			json.Unmarshal(v.Error, &s)
			return s
		case v.Message != "":
			return v.Message
		}
	}
	return firstBytes(data)
}

func firstBytes(data []byte) string {
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "an empty answer"
	}
	return s
}

// Serves reports whether list (from ListModels) has model: the name itself, or a dated
// version of it (Anthropic lists claude-sonnet-4-5-20250929 and serves claude-sonnet-4-5), or
// an Ollama tag (llama3 is llama3:latest).
func Serves(list []string, model string) bool {
	for _, m := range list {
		if m == model || strings.HasPrefix(m, model+"-") || m == model+":latest" {
			return true
		}
	}
	return false
}
