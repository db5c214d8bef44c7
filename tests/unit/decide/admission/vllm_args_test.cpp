#include "decide/admission/vllm_args.h"

#include <gtest/gtest.h>

using namespace kubex::decide;
using Args = std::vector<std::string>;

// VLM-1: the image repository path, without registry host, tag and digest.
TEST(VllmArgs, ImageRepositoryPath) {
  EXPECT_EQ(image_repository_path("vllm/vllm-openai:v0.6.3"), "vllm/vllm-openai");
  EXPECT_EQ(image_repository_path("docker.io/vllm/vllm-openai:latest@sha256:abc"), "vllm/vllm-openai");
  EXPECT_EQ(image_repository_path("localhost:5000/team/server:1"), "team/server");
  EXPECT_EQ(image_repository_path("localhost/team/server"), "team/server");
  EXPECT_EQ(image_repository_path("registry.vllm.ai/team/llm:1"), "team/llm");  // host removed first
  EXPECT_EQ(image_repository_path("ubuntu"), "ubuntu");
  EXPECT_EQ(image_repository_path("ubuntu@sha256:0123"), "ubuntu");
}

// VLM-1: detection by image, `vllm serve`, `vllm.entrypoints`, or a KubeAI Model with engine VLLM.
TEST(VllmArgs, Detection) {
  struct Case {
    const char* image;
    Args command, args;
    const char* engine;
    bool want;
  } cases[] = {
      {"vllm/vllm-openai:v0.6.3", {}, {"--model", "m"}, "", true},
      {"ghcr.io/acme/VLLM-Server:1", {}, {}, "", true},  // case-insensitive
      {"registry.vllm.ai/team/llm:1", {}, {}, "", false},
      {"python:3.11", {"vllm", "serve"}, {"m"}, "", true},
      {"python:3.11", {"sh", "-c"}, {"exec vllm serve facebook/opt-125m --port 8000"}, "", true},
      {"python:3.11", {"python3", "-m", "vllm.entrypoints.openai.api_server"}, {}, "", true},
      {"python:3.11", {"vllm"}, {"--help"}, "", false},  // not followed by serve
      {"python:3.11", {"serve", "vllm"}, {}, "", false},
      {"python:3.11", {}, {}, "VLLM", true},  // KubeAI Model engine
      {"python:3.11", {}, {}, "OLlama", false},
      {"nvcr.io/nvidia/pytorch:24.01-py3", {"python", "train.py"}, {}, "", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(is_vllm_container(c.image, c.command, c.args, c.engine), c.want) << c.image;  // VLM-1
  }
}

// VLM-3: the SPEC examples.
TEST(VllmArgs, MemoryUtilizationValue) {
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 10, 50)), "0.45");           // 0.5/10
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 0, 70)), "0.7");             // 0.7/0
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 10, 25)), "0.22");           // 0.25/10, rounded DOWN
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 10, 30)), "0.27");           // 0.3/10
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 100, 25)), "0.05");          // floored at 0.05
  EXPECT_EQ(format_gpu(vllm_memory_utilization("HAMiCore", 10, 25)), "0.9");        // HAMiCore: 1 - b/100
  EXPECT_EQ(format_gpu(vllm_memory_utilization("HamiCore", 10, 25)), "0.9");        // KAI-1's spelling
  EXPECT_EQ(format_gpu(vllm_memory_utilization("NvFractions", 10, 30)), "0.27");    // the request's share
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 10, std::nullopt)), "0.9");  // whole GPUs
  EXPECT_EQ(format_gpu(vllm_memory_utilization("None", 0, std::nullopt)), "1");
}

// VLM-4: the rewrite rules.
TEST(VllmArgs, Rewrite) {
  struct Case {
    const char* name;
    Args command, args;
    Args want_command, want_args;
    bool changed, not_rewritable;
  } cases[] = {
      {"= form",
       {},
       {"--model", "m", "--gpu-memory-utilization=0.9"},
       {},
       {"--model", "m", "--gpu-memory-utilization=0.45"},
       true,
       false},
      {"split form",
       {},
       {"--gpu-memory-utilization", "0.9", "--port", "8000"},
       {},
       {"--gpu-memory-utilization", "0.45", "--port", "8000"},
       true,
       false},
      {"absent", {}, {"--model", "m"}, {}, {"--model", "m", "--gpu-memory-utilization=0.45"}, true, false},
      {"no args at all",
       {"vllm", "serve", "m"},
       {},
       {"vllm", "serve", "m"},
       {"--gpu-memory-utilization=0.45"},
       true,
       false},
      {"duplicates",
       {},
       {"--gpu-memory-utilization=0.8", "--model", "m", "--gpu-memory-utilization", "0.7",
        "--gpu-memory-utilization=0.6"},
       {},
       {"--gpu-memory-utilization=0.45", "--model", "m"},
       true,
       false},
      {"first in command",
       {"vllm", "serve", "m", "--gpu-memory-utilization=0.9"},
       {"--gpu-memory-utilization", "0.5"},
       {"vllm", "serve", "m", "--gpu-memory-utilization=0.45"},
       {},
       true,
       false},
      {"split across command and args",
       {"vllm", "serve", "--gpu-memory-utilization"},
       {"0.9", "m"},
       {"vllm", "serve", "--gpu-memory-utilization"},
       {"0.45", "m"},
       true,
       false},
      {"lone flag",
       {},
       {"--gpu-memory-utilization", "--port", "1"},
       {},
       {"--gpu-memory-utilization=0.45", "--port", "1"},
       true,
       false},
      {"already right",
       {},
       {"--gpu-memory-utilization=0.45"},
       {},
       {"--gpu-memory-utilization=0.45"},
       false,
       false},
      {"inside sh -c",
       {"sh", "-c"},
       {"vllm serve m --gpu-memory-utilization=0.9"},
       {"sh", "-c"},
       {"vllm serve m --gpu-memory-utilization=0.9"},
       false,
       true},
      {"inside sh -c split",
       {"sh", "-c", "vllm serve m --gpu-memory-utilization 0.9"},
       {},
       {"sh", "-c", "vllm serve m --gpu-memory-utilization 0.9"},
       {},
       false,
       true},
      {"sh -c and standalone",
       {"sh", "-c", "run --gpu-memory-utilization=0.2"},
       {"--gpu-memory-utilization=0.9"},
       {"sh", "-c", "run --gpu-memory-utilization=0.2"},
       {"--gpu-memory-utilization=0.45"},
       true,
       false},
      {"similar flag is not the flag",
       {},
       {"--gpu-memory-utilization-x=1"},
       {},
       {"--gpu-memory-utilization-x=1", "--gpu-memory-utilization=0.45"},
       true,
       false},
  };
  for (const auto& c : cases) {
    const VllmRewrite r = rewrite_vllm_args(c.command, c.args, "0.45");
    EXPECT_EQ(r.command, c.want_command) << c.name;  // VLM-4
    EXPECT_EQ(r.args, c.want_args) << c.name;
    EXPECT_EQ(r.changed, c.changed) << c.name;
    EXPECT_EQ(r.not_rewritable, c.not_rewritable) << c.name;
    // Rewriting the result again changes nothing (ADM-2).
    if (!r.not_rewritable) {
      EXPECT_FALSE(rewrite_vllm_args(r.command, r.args, "0.45").changed) << c.name;
    }
  }
}
