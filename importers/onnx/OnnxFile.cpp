// Reading an ONNX model file; see OnnxFile.h. Compiled with exceptions: ONNX's library and
// the standard library throw, and every exception ends here as a message.
#include "importers/onnx/OnnxFile.h"

#include "runtime/base/Files.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

namespace dp::onnx_import {
namespace {

/// The size of the regular file at `path`, or the problem.
std::string regularFileSize(const std::string &path, uint64_t &size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return std::string("cannot read it: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode))
    return "not a regular file";
  size = static_cast<uint64_t>(st.st_size);
  return "";
}

/// Reads `length` bytes at `offset` of `path` into `out`, or says why not.
std::string readRange(const std::string &path, uint64_t offset, uint64_t length, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::string("cannot open it: ") + std::strerror(errno);
  in.seekg(static_cast<std::streamoff>(offset));
  out.resize(length);
  if (length && !in.read(out.data(), static_cast<std::streamsize>(length)))
    return "cannot read " + std::to_string(length) + " bytes at " + std::to_string(offset);
  return "";
}

/// A decimal count of the external-data table ("4096"), or false.
bool parseCount(const std::string &text, uint64_t &value) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != text.npos)
    return false;
  value = std::stoull(text);
  return true;
}

/// Whether `location` names a file inside the model's folder: relative, without `..`.
bool insideFolder(const std::string &location) {
  if (location.empty() || location.front() == '/' || location.find('\0') != location.npos)
    return false;
  std::stringstream parts(location);
  std::string part;
  while (std::getline(parts, part, '/'))
    if (part == "..")
      return false;
  return true;
}

/// Calls `visit` on every tensor of `graph`: initializers, sparse ones, node attributes and
/// the graphs nested in them.
void forEachTensor(onnx::GraphProto &graph, const std::function<void(onnx::TensorProto &)> &visit) {
  for (onnx::TensorProto &t : *graph.mutable_initializer())
    visit(t);
  for (onnx::SparseTensorProto &s : *graph.mutable_sparse_initializer()) {
    visit(*s.mutable_values());
    visit(*s.mutable_indices());
  }
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &a : *node.mutable_attribute()) {
      if (a.has_t())
        visit(*a.mutable_t());
      for (onnx::TensorProto &t : *a.mutable_tensors())
        visit(t);
      if (a.has_g())
        forEachTensor(*a.mutable_g(), visit);
      for (onnx::GraphProto &g : *a.mutable_graphs())
        forEachTensor(g, visit);
    }
}

/// The folder of `path`, with its trailing slash ("" for a bare name).
std::string folderOf(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == path.npos ? "" : path.substr(0, slash + 1);
}

/// Loads one external tensor's bytes into its raw_data; `loaded` counts the bytes so far.
std::string loadExternal(onnx::TensorProto &t, const std::string &folder, const OnnxLimits &limits,
                         uint64_t &loaded) {
  const std::string what = "tensor '" + t.name() + "'";
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  for (const onnx::StringStringEntryProto &e : t.external_data()) {
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset" || e.key() == "length") {
      uint64_t &field = e.key() == "offset" ? offset : length;
      if (!parseCount(e.value(), field))
        return what + " has external data at " + e.key() + " '" + e.value() + "', not a byte count";
      hasLength |= e.key() == "length";
    }
  }
  if (location.empty())
    return what + " keeps its data in an external file but does not say which (no location)";
  if (!insideFolder(location))
    return what + " keeps its data in '" + location +
           "', outside the model's folder: only relative paths without '..' are read";
  const std::string file = folder + location;
  uint64_t size = 0;
  if (std::string problem = regularFileSize(file, size); !problem.empty())
    return what + " keeps its data in " + file + ": " + problem;
  if (offset > size)
    return what + " starts at byte " + std::to_string(offset) + " of " + file + ", which has " +
           std::to_string(size);
  if (!hasLength)
    length = size - offset;
  if (length > size - offset)
    return what + " takes " + std::to_string(length) + " bytes at " + std::to_string(offset) +
           " of " + file + ", which has " + std::to_string(size);
  // The data must be the tensor's size exactly, before any of it is read.
  uint64_t elements = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && elements > std::numeric_limits<uint64_t>::max() / uint64_t(d)))
      return what + " has a dimension of " + std::to_string(d);
    elements *= static_cast<uint64_t>(d);
  }
  const uint64_t width = elementBytes(t.data_type());
  if (width == 0)
    return what + " of data type " + std::to_string(t.data_type()) +
           " keeps its data in an external file: only numeric tensors are read from one";
  if (elements > std::numeric_limits<uint64_t>::max() / width || elements * width != length)
    return what + " has " + std::to_string(length) + " bytes in " + file + " but its shape and " +
           "type need " + std::to_string(elements) + " x " + std::to_string(width);
  if (length > limits.externalBytes - loaded)
    return what + " would take the external data read past " +
           std::to_string(limits.externalBytes) + " bytes";
  std::string bytes;
  if (std::string problem = readRange(file, offset, length, bytes); !problem.empty())
    return what + " keeps its data in " + file + ": " + problem;
  loaded += length;
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  return "";
}

} // namespace

int64_t libraryIrVersion() { return onnx::IR_VERSION; }

int64_t libraryOpset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at(onnx::ONNX_DOMAIN)
      .second;
}

uint64_t elementBytes(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::COMPLEX64:
    return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return 1;
  case onnx::TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

std::string readOnnxFile(const std::string &path, OnnxFile &out, const OnnxLimits &limits) {
  auto fail = [&](const std::string &problem) { return path + ": " + problem; };
  try {
    out = OnnxFile();
    out.path = path;
    uint64_t size = 0;
    if (std::string problem = regularFileSize(path, size); !problem.empty())
      return fail(problem);
    const uint64_t cap = std::min<uint64_t>(limits.modelBytes, std::numeric_limits<int>::max());
    if (size > cap)
      return fail(std::to_string(size) + " bytes, over the " + std::to_string(cap) +
                  " a model file may have (keep large weights in external data)");
    std::string bytes;
    if (std::string problem = readRange(path, 0, size, bytes); !problem.empty())
      return fail(problem);
    return parseOnnxBytes(bytes, path, out, limits);
  } catch (const std::exception &e) {
    return fail(std::string("cannot read it: ") + e.what());
  }
}

std::string parseOnnxBytes(const std::string &bytes, const std::string &path, OnnxFile &out,
                           const OnnxLimits &limits) {
  auto fail = [&](const std::string &problem) { return path + ": " + problem; };
  try {
    out = OnnxFile();
    out.path = path;
    if (bytes.size() > std::min<uint64_t>(limits.modelBytes, std::numeric_limits<int>::max()))
      return fail(std::to_string(bytes.size()) + " bytes, over what a model file may have");
    if (!out.model.ParseFromString(bytes))
      return fail("not an ONNX model (its bytes do not parse as an ONNX ModelProto)");
    if (!out.model.has_graph())
      return fail("not an ONNX model (it has no graph)");
    for (const onnx::OperatorSetIdProto &o : out.model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx")
        out.opset = o.version();
    if (out.opset <= 0)
      return fail("the model imports no opset of the default ONNX domain");
    std::string problem;
    uint64_t loaded = 0;
    const std::string folder = folderOf(path);
    forEachTensor(*out.model.mutable_graph(), [&](onnx::TensorProto &t) {
      if (problem.empty() && t.data_location() == onnx::TensorProto::EXTERNAL)
        problem = loadExternal(t, folder, limits, loaded);
    });
    if (!problem.empty())
      return fail(problem);
    // ONNX's checker knows the library's versions only: a newer model (PyTorch's default
    // exporter writes IR 10 and opset 18) is left to the importer's own checks.
    if (out.model.ir_version() <= libraryIrVersion() && out.opset <= libraryOpset()) {
      try {
        onnx::checker::check_model(out.model);
      } catch (const std::exception &e) {
        return fail(std::string("ONNX's checker refuses it: ") + e.what());
      }
      out.checked = true;
    }
    return "";
  } catch (const std::exception &e) {
    return fail(std::string("cannot read it: ") + e.what());
  }
}

std::string writeOnnxFile(const std::string &path, const onnx::ModelProto &model) {
  try {
    int64_t opset = 0;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx")
        opset = o.version();
    if (model.ir_version() <= libraryIrVersion() && opset <= libraryOpset()) {
      try {
        onnx::checker::check_model(model);
      } catch (const std::exception &e) {
        return path + ": ONNX's checker refuses the model to write: " + e.what();
      }
    }
    if (model.ByteSizeLong() >= (uint64_t(2) << 30))
      return path + ": the model is over protobuf's 2 GiB (external data is not written yet)";
    std::string bytes;
    if (!model.SerializeToString(&bytes))
      return path + ": the model does not serialize";
    rt::writeFileAtomically(path, bytes); // throws Error naming the path
    return "";
  } catch (const std::exception &e) {
    return e.what();
  }
}

} // namespace dp::onnx_import
