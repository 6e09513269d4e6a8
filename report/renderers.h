// renderers.h: the concrete Reporters behind MakeReporter (report/report.h).
// Each lives in its own file: text.cc, json.cc, markdown.cc, junit.cc,
// sarif.cc, github.cc, html.cc.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "report/report.h"

namespace tpt::report {

std::unique_ptr<Reporter> MakeTextReporter();
std::unique_ptr<Reporter> MakeJsonReporter();
std::unique_ptr<Reporter> MakeMarkdownReporter();
std::unique_ptr<Reporter> MakeJunitReporter();
std::unique_ptr<Reporter> MakeSarifReporter();
std::unique_ptr<Reporter> MakeGithubReporter();
std::unique_ptr<Reporter> MakeHtmlReporter();

// Workflow-command escaping (actions/toolkit): data escapes %, \r, \n;
// a property value also escapes : and ,.
std::string GithubEscapeData(std::string_view s);
std::string GithubEscapeProperty(std::string_view s);

// GitHub's limits on annotations per step (actions/toolkit problem-matchers).
inline constexpr int kGithubMaxErrors = 10;
inline constexpr int kGithubMaxWarnings = 10;

}  // namespace tpt::report
