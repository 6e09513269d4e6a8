// generate.cc: the man page and the bash/zsh/fish completions, written from the
// same option tables the commands parse with (cli/args.h), so none of them can
// drift from the flags.
#include "cli/generate.h"

#include <sstream>

namespace tpt::cli {

namespace {

enum class ValueKind { kNone, kFile, kDir, kChoice, kFree };

ValueKind KindOf(const OptionDoc& o) {
  if (o.placeholder.empty()) return ValueKind::kNone;
  if (!o.choices.empty()) return ValueKind::kChoice;
  if (o.placeholder == "FILE" || o.placeholder == "LOG") return ValueKind::kFile;
  if (o.placeholder == "DIR") return ValueKind::kDir;
  return ValueKind::kFree;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// troff: backslashes doubled, hyphens in flags literal, no control line by accident.
std::string Roff(const std::string& s) {
  std::string out;
  bool line_start = true;
  for (char c : s) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::vector<std::string> Lines(const char* text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// Single-quoted for sh/zsh/fish: ' -> '\''.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// zsh's _arguments reads [ ] : specially inside an option's description.
std::string ZshDesc(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string FishDesc(const std::string& d) {
  std::string s = d.size() > 70 ? d.substr(0, 67) + "..." : d;
  return Quote(s);
}

}  // namespace

std::string GenerateMan(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global,
                        const std::string& version) {
  std::ostringstream s;
  s << ".TH TPTRIAGE 1 \"\" \"tptriage " << version << "\" \"User Commands\"\n";
  s << ".SH NAME\ntptriage \\- why a multi\\-GPU LLM server died, with the numbers\n";
  s << ".SH SYNOPSIS\n.B tptriage\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n";
  s << ".SH DESCRIPTION\n"
    << Roff("tptriage reads the logs of tensor-parallel LLM servers (SGLang, vLLM, TGI, TensorRT-LLM, "
            "LMDeploy, torchrun/NCCL jobs), finds the earliest cause of a crash under the launcher's noise, "
            "computes the server's own memory arithmetic, rules out the suspects the log invites, and gives "
            "the fix as a flag value and a direction.")
    << "\n";
  s << ".SH GLOBAL OPTIONS\n";
  for (const auto& o : global) {
    s << ".TP\n\\fB" << (o.short_name.empty() ? "" : "\\-" + o.short_name + "\\fR, \\fB") << "\\-\\-"
      << Roff(o.long_name) << "\\fR" << (o.placeholder.empty() ? "" : " \\fI" + Roff(o.placeholder) + "\\fR")
      << "\n" << Roff(o.description) << "\n";
  }
  s << ".SH COMMANDS\n";
  for (const auto& c : cmds) {
    s << ".SS \"tptriage " << c.doc->name << "\"\n" << Roff(c.doc->summary) << ".\n.PP\n";
    for (const auto& line : Lines(c.doc->usage)) s << ".nf\n" << Roff(line) << "\n.fi\n";
    s << ".PP\n" << Roff(c.doc->description) << "\n";
    for (const auto& o : c.options) {
      s << ".TP\n\\fB" << (o.short_name.empty() ? "" : "\\-" + o.short_name + "\\fR, \\fB") << "\\-\\-"
        << Roff(o.long_name) << "\\fR" << (o.placeholder.empty() ? "" : " \\fI" + Roff(o.placeholder) + "\\fR")
        << "\n" << Roff(o.description);
      if (!o.default_value.empty()) s << " (default: " << Roff(o.default_value) << ")";
      s << "\n";
    }
    s << ".PP\nExamples:\n.PP\n.nf\n.RS 4\n";
    for (const auto& line : Lines(c.doc->examples)) s << Roff(line) << "\n";
    s << ".RE\n.fi\n.PP\nExit codes:\n.PP\n.nf\n.RS 4\n";
    for (const auto& line : Lines(c.doc->exit_codes)) s << Roff(line) << "\n";
    s << ".RE\n.fi\n";
  }
  s << ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\n"
    << Roff("when set (to anything), no colour is written even on a terminal; --color always overrides it.")
    << "\n";
  s << ".SH SEE ALSO\n" << Roff("tptriage help kinds, tptriage help root-causes, tptriage help formats, "
                                     "tptriage help format-files, tptriage help rule-files, tptriage help finding-files") << "\n";
  return s.str();
}

std::string GenerateBash(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global) {
  std::ostringstream s;
  std::vector<std::string> names;
  for (const auto& c : cmds) names.push_back(c.doc->name);
  names.push_back("help");
  for (const auto& o : global) {
    names.push_back("--" + o.long_name);
    if (!o.short_name.empty()) names.push_back("-" + o.short_name);
  }
  s << "# bash completion for tptriage (generated by `tptriage --generate complete-bash`)\n"
    << "_tptriage() {\n"
    << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
    << "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
    << "    COMPREPLY=($(compgen -W " << Quote(Join(names, " ")) << " -- \"$cur\"))\n"
    << "    return\n  fi\n"
    << "  case \"${COMP_WORDS[1]}\" in\n";
  for (const auto& c : cmds) {
    s << "    " << c.doc->name << ")\n      case \"$prev\" in\n";
    std::vector<std::string> flags;
    for (const auto& o : c.options) {
      std::string pat = "--" + o.long_name + (o.short_name.empty() ? "" : "|-" + o.short_name);
      flags.push_back("--" + o.long_name);
      switch (KindOf(o)) {
        case ValueKind::kNone:
          break;
        case ValueKind::kFile:
          s << "        " << pat << ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
          break;
        case ValueKind::kDir:
          s << "        " << pat << ") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n";
          break;
        case ValueKind::kChoice:
          s << "        " << pat << ") COMPREPLY=($(compgen -W " << Quote(Join(o.choices, " "))
            << " -- \"$cur\")); return ;;\n";
          break;
        case ValueKind::kFree:
          s << "        " << pat << ") return ;;\n";
          break;
      }
    }
    s << "      esac\n"
      << "      if [[ \"$cur\" == -* ]]; then\n"
      << "        COMPREPLY=($(compgen -W " << Quote(Join(flags, " ")) << " -- \"$cur\"))\n"
      << "      else\n        COMPREPLY=($(compgen -f -- \"$cur\"))\n      fi ;;\n";
  }
  s << "    help)\n      COMPREPLY=($(compgen -W "
    << Quote(Join(names, " ") + " kinds root-causes formats format-files rule-files finding-files") << " -- \"$cur\")) ;;\n";
  s << "  esac\n}\ncomplete -o filenames -o bashdefault -F _tptriage tptriage\n";
  return s.str();
}

std::string GenerateZsh(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global) {
  std::ostringstream s;
  s << "#compdef tptriage\n# zsh completion for tptriage (generated by `tptriage --generate complete-zsh`)\n"
    << "_tptriage() {\n  local -a commands\n  commands=(\n";
  for (const auto& c : cmds) s << "    " << Quote(std::string(c.doc->name) + ":" + c.doc->summary) << "\n";
  s << "    'help:show the help of a command or topic'\n  )\n"
    << "  if (( CURRENT == 2 )); then\n    _describe -t commands 'tptriage command' commands\n";
  for (const auto& o : global) {
    s << "    compadd -- --" << o.long_name << (o.short_name.empty() ? "" : " -" + o.short_name) << "\n";
  }
  s << "    return\n  fi\n  local cmd=$words[2]\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n";
  for (const auto& c : cmds) {
    s << "    " << c.doc->name << ")\n      _arguments -s";
    for (const auto& o : c.options) {
      std::string spec = "--" + o.long_name + "[" + ZshDesc(o.description) + "]";
      switch (KindOf(o)) {
        case ValueKind::kNone:
          break;
        case ValueKind::kFile:
          spec += ":" + o.placeholder + ":_files";
          break;
        case ValueKind::kDir:
          spec += ":" + o.placeholder + ":_files -/";
          break;
        case ValueKind::kChoice:
          spec += ":" + o.placeholder + ":(" + Join(o.choices, " ") + ")";
          break;
        case ValueKind::kFree:
          spec += ":" + o.placeholder + ": ";
          break;
      }
      s << " \\\n        " << Quote(spec);
      if (!o.short_name.empty()) {
        std::string short_spec = "-" + o.short_name + spec.substr(2 + o.long_name.size());
        s << " \\\n        " << Quote(short_spec);
      }
    }
    s << " \\\n        '*:file:_files' ;;\n";
  }
  s << "    help)\n      _values 'topic'";
  for (const auto& c : cmds) s << " " << c.doc->name;
  s << " kinds root-causes formats format-files rule-files finding-files ;;\n  esac\n}\n_tptriage \"$@\"\n";
  return s.str();
}

std::string GenerateFish(const std::vector<CommandOptions>& cmds, const std::vector<OptionDoc>& global) {
  std::ostringstream s;
  s << "# fish completion for tptriage (generated by `tptriage --generate complete-fish`)\n"
    << "complete -c tptriage -f\n";
  std::vector<std::string> names;
  for (const auto& c : cmds) names.push_back(c.doc->name);
  names.push_back("help");
  for (const auto& c : cmds) {
    s << "complete -c tptriage -n __fish_use_subcommand -a " << c.doc->name << " -d " << FishDesc(c.doc->summary)
      << "\n";
  }
  s << "complete -c tptriage -n __fish_use_subcommand -a help -d 'show the help of a command or topic'\n";
  for (const auto& o : global) {
    s << "complete -c tptriage -n __fish_use_subcommand -l " << o.long_name
      << (o.short_name.empty() ? "" : " -s " + o.short_name) << (o.placeholder.empty() ? "" : " -r")
      << " -d " << FishDesc(o.description) << "\n";
  }
  s << "complete -c tptriage -n '__fish_seen_subcommand_from help' -a "
    << Quote(Join(names, " ") + " kinds root-causes formats format-files rule-files finding-files") << "\n";
  for (const auto& c : cmds) {
    std::string cond = std::string("'__fish_seen_subcommand_from ") + c.doc->name + "'";
    s << "complete -c tptriage -n " << cond << " -F\n";
    for (const auto& o : c.options) {
      s << "complete -c tptriage -n " << cond << " -l " << o.long_name
        << (o.short_name.empty() ? "" : " -s " + o.short_name);
      switch (KindOf(o)) {
        case ValueKind::kNone:
          break;
        case ValueKind::kFile:
          s << " -r -F";
          break;
        case ValueKind::kDir:
          s << " -r -a '(__fish_complete_directories)'";
          break;
        case ValueKind::kChoice:
          s << " -r -f -a " << Quote(Join(o.choices, " "));
          break;
        case ValueKind::kFree:
          s << " -r -f";
          break;
      }
      s << " -d " << FishDesc(o.description) << "\n";
    }
  }
  return s.str();
}

}  // namespace tpt::cli
