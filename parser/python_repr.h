// python_repr.h: Python reprs of keyword arguments (server args) as JSON.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace tpt {

// Parses a Python repr of keyword arguments or a dict into a JSON object:
//   "tp_size=2, model_path='m', cuda_graph_bs=[1, 2], x=None"      (ServerArgs / Namespace)
//   "{'model': 'm', 'tensor_parallel_size': 2}"                      (vLLM non-default args)
//   "'model': 'm', 'tensor_parallel_size': 2}"                       (the same, brace left out)
// Values: None -> null, True/False -> bool, numbers, quoted strings, lists and
// dicts recursively; anything else is kept as its text. Never fails; a cut
// (abbreviated "...") repr yields the pairs that were complete.
nlohmann::json ParsePythonKv(std::string_view text);

// Copies the known server_args keys of `args` (parser/EVENTS.md) into `fields`
// under their canonical names (tensor_parallel_size -> tp_size, model_path -> model, ...).
void CopyKnownServerArgs(const nlohmann::json& args, nlohmann::json* fields);

}  // namespace tpt
