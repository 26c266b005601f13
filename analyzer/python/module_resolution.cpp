#include "analyzer/python/module_resolution.hpp"

#include <algorithm>

namespace oomlens::analyzer::python {
namespace {

std::string_view directory_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

std::string join(std::string_view directory, std::string_view name) {
  if (directory.empty()) return std::string(name);
  std::string out(directory);
  out += '/';
  out += name;
  return out;
}

std::vector<std::string_view> split_dots(std::string_view dotted) {
  std::vector<std::string_view> parts;
  while (!dotted.empty()) {
    auto dot = dotted.find('.');
    parts.push_back(dotted.substr(0, dot));
    if (dot == std::string_view::npos) break;
    dotted.remove_prefix(dot + 1);
  }
  return parts;
}

// The files a dotted module runs under one search directory: each package's
// __init__.py, then the module. `resolved` counts the leading parts that are
// project files (a directory without __init__.py is a namespace package: it
// runs nothing, and resolves only if something below it does).
struct Chain {
  std::vector<std::string> files;
  std::size_t resolved = 0;
};

Chain chain_under(std::string_view base, const std::vector<std::string_view>& parts, const ProjectFileExists& exists) {
  Chain chain;
  std::string directory(base);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    directory = join(directory, parts[i]);
    if (std::string init = directory + "/__init__.py"; exists(init)) {
      chain.files.push_back(std::move(init));
      chain.resolved = i + 1;
    } else if (std::string file = directory + ".py"; exists(file)) {
      chain.files.push_back(std::move(file));
      chain.resolved = i + 1;
      break;  // a module file has no submodules
    }
  }
  return chain;
}

// Where an absolute module name is searched, in sys.path's order.
std::vector<std::string> search_directories(std::string_view importer, const ProjectFileExists& exists) {
  std::vector<std::string> bases;
  std::string_view own = directory_of(importer);
  if (!own.empty() && !exists(join(own, "__init__.py"))) bases.emplace_back(own);  // a script's directory
  bases.emplace_back("");
  if (own != "src") bases.emplace_back("src");
  return bases;
}

// The package directory `dots` leading dots name from `importer`: "." its
// own, ".." the one above; nothing above the root.
std::optional<std::string> relative_base(std::size_t dots, std::string_view importer) {
  std::string_view base = directory_of(importer);
  for (std::size_t i = 1; i < dots; ++i) {
    if (base.empty()) return std::nullopt;
    base = directory_of(base);
  }
  return std::string(base);
}

// The chain of a module as written in `importer`: relative from its package,
// else from the first search directory where the whole name resolves (or
// failing that, where most of it does). `base` is where it resolved: nothing
// for a relative name above the root.
Chain module_chain(std::string_view module, std::string_view importer, const ProjectFileExists& exists,
                   std::optional<std::string>& base) {
  std::size_t dots = module.find_first_not_of('.');
  if (dots == std::string_view::npos) dots = module.size();
  auto parts = split_dots(module.substr(dots));
  if (dots > 0) {
    base = relative_base(dots, importer);
    return base ? chain_under(*base, parts, exists) : Chain{};
  }
  base = "";
  Chain best;
  for (auto& directory : search_directories(importer, exists)) {
    Chain chain = chain_under(directory, parts, exists);
    if (chain.resolved > best.resolved) {
      best = std::move(chain);
      base = directory;
    }
    if (best.resolved == parts.size() && !parts.empty()) break;
  }
  return best;
}

std::size_t part_count(std::string_view module) {
  std::size_t dots = module.find_first_not_of('.');
  return dots == std::string_view::npos ? 0 : split_dots(module.substr(dots)).size();
}

// The directory a module's submodules sit in, when it is a package.
std::optional<std::string> package_directory(std::string_view module, const std::optional<std::string>& base,
                                             const Chain& chain) {
  if (!base) return std::nullopt;
  std::size_t dots = module.find_first_not_of('.');
  if (dots == std::string_view::npos) return base;  // `from . import x`
  if (chain.resolved != part_count(module) || !chain.files.back().ends_with("/__init__.py")) return std::nullopt;
  return std::string(directory_of(chain.files.back()));
}

std::optional<std::string> submodule_file(std::string_view directory, std::string_view name,
                                          const ProjectFileExists& exists) {
  std::string path = join(directory, name);
  if (std::string init = path + "/__init__.py"; exists(init)) return init;
  if (std::string file = path + ".py"; exists(file)) return file;
  return std::nullopt;
}

void append_new(std::vector<std::string>& out, std::vector<std::string> files) {
  for (auto& f : files)
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(std::move(f));
}

}  // namespace

std::optional<std::string> module_file(std::string_view module, std::string_view importer,
                                       const ProjectFileExists& exists) {
  std::optional<std::string> base;
  Chain chain = module_chain(module, importer, exists, base);
  std::size_t parts = part_count(module);
  if (parts == 0) {  // the package of a relative import itself: ".", ".."
    if (!base || base->empty()) return std::nullopt;
    std::string init = join(*base, "__init__.py");
    return exists(init) ? std::optional(init) : std::nullopt;
  }
  if (chain.resolved != parts) return std::nullopt;
  return chain.files.back();
}

std::vector<std::string> files_loaded(const Import& import, std::string_view importer,
                                      const ProjectFileExists& exists) {
  std::vector<std::string> out;
  if (import.future) return out;
  if (import.from_module.empty()) {  // import a.b.c, import a.b as c
    for (const auto& name : import.names) {
      std::optional<std::string> base;
      append_new(out, module_chain(name.module, importer, exists, base).files);
    }
    return out;
  }
  std::optional<std::string> base;
  Chain chain = module_chain(import.from_module, importer, exists, base);
  append_new(out, chain.files);
  auto directory = package_directory(import.from_module, base, chain);
  if (!directory || import.wildcard) return out;
  for (const auto& name : import.names) {
    std::string_view imported = name.qualified;
    imported.remove_prefix(std::min(imported.size(), import.from_module.size()));
    if (imported.starts_with('.')) imported.remove_prefix(1);
    if (imported.empty() || imported.find('.') != std::string_view::npos) continue;
    if (auto file = submodule_file(*directory, imported, exists)) append_new(out, {std::move(*file)});
  }
  return out;
}

std::optional<ProjectFunction> project_function(std::string_view qualified, std::string_view importer,
                                                const ProjectFileExists& exists) {
  auto last_dot = qualified.rfind('.');
  if (last_dot == std::string_view::npos || last_dot + 1 == qualified.size()) return std::nullopt;
  std::string_view module = qualified.substr(0, last_dot);
  std::string_view function = qualified.substr(last_dot + 1);
  if (auto file = module_file(module, importer, exists)) return ProjectFunction{std::move(*file), std::string(function)};
  // A method of a module's class: "pkg.memory.Manager.flush".
  auto class_dot = module.rfind('.');
  if (class_dot == std::string_view::npos || class_dot + 1 == module.size()) return std::nullopt;
  auto file = module_file(module.substr(0, class_dot), importer, exists);
  if (!file) return std::nullopt;
  return ProjectFunction{std::move(*file), std::string(qualified.substr(class_dot + 1))};
}

}  // namespace oomlens::analyzer::python
