// Writing trained weights into an ONNX model (see Export.h).
#include "importers/onnx/Export.h"

#include "runtime/base/ParamsFile.h"

namespace dp::onnx_import {

std::string readParamsFile(const std::string &path,
                           std::map<std::string, std::vector<float>> &out) {
  std::vector<rt::ParamsEntry> entries;
  if (std::string problem = rt::readParamsFile(path, entries); !problem.empty())
    return problem;
  for (rt::ParamsEntry &e : entries)
    if (e.name.find('/') == std::string::npos) // optimizer state: "<parameter>/<slot>"
      out.try_emplace(e.name, std::move(e.values));
  return "";
}

std::string withTrainedWeights(const OnnxFile &file, const std::vector<ParamOrigin> &origins,
                               const std::map<std::string, std::vector<float>> &params,
                               onnx::ModelProto &out) {
  out = file.model;
  onnx::GraphProto &g = *out.mutable_graph();
  for (const ParamOrigin &o : origins) {
    auto found = params.find(o.param);
    if (found == params.end())
      return "the parameters hold no '" + o.param + "' (trained from another model?)";
    int64_t count = 1;
    for (int64_t d : o.layout.onnxDims)
      count *= d;
    if (int64_t(found->second.size()) != count)
      return "the parameters' '" + o.param + "' has " + std::to_string(found->second.size()) +
             " values, the model's " + std::to_string(count);
    std::vector<float> values = o.layout.toOnnx(found->second);
    onnx::TensorProto *t = nullptr;
    for (onnx::TensorProto &init : *g.mutable_initializer())
      if (init.name() == o.onnxName)
        t = &init;
    if (!t) {
      t = g.add_initializer();
      t->set_name(o.onnxName);
      // The node that made the value (an Identity of another constant) goes.
      for (int k = 0; k < g.node_size(); ++k)
        if (g.node(k).output_size() == 1 && g.node(k).output(0) == o.onnxName) {
          g.mutable_node()->DeleteSubrange(k, 1);
          break;
        }
    }
    *t = onnx::TensorProto();
    t->set_name(o.onnxName);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : o.layout.onnxDims)
      t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char *>(values.data()), values.size() * 4));
    for (auto [node, input] : o.rewire)
      if (node < file.model.graph().node_size()) {
        // Node indices are the file's: find the node by its outputs (nodes may have gone).
        const onnx::NodeProto &original = file.model.graph().node(node);
        for (onnx::NodeProto &n : *g.mutable_node())
          if (n.output_size() && original.output_size() && n.output(0) == original.output(0) &&
              input < n.input_size())
            n.set_input(input, o.onnxName);
      }
  }
  return "";
}

rt::ExportSourceDesc exportSource(const OnnxFile &file, const std::vector<ParamOrigin> &origins) {
  onnx::ModelProto model = file.model;
  rt::ExportSourceDesc source;
  source.format = "onnx";
  for (const ParamOrigin &o : origins) {
    for (onnx::TensorProto &init : *model.mutable_graph()->mutable_initializer())
      if (init.name() == o.onnxName) {
        // The trained values replace these: keep the name, type and shape only.
        init.clear_raw_data();
        init.clear_float_data();
        init.clear_data_location();
        init.clear_external_data();
      }
    rt::ExportParamDesc d;
    d.param = o.param;
    d.value = o.onnxName;
    d.isInitializer = o.isInitializer;
    d.rewire.assign(o.rewire.begin(), o.rewire.end());
    d.layout = static_cast<uint8_t>(o.layout.kind);
    d.dims = o.layout.onnxDims;
    d.flattenedChw = o.layout.flattenedChw;
    source.params.push_back(std::move(d));
  }
  model.SerializeToString(&source.model);
  return source;
}

std::string exportTrainedModel(const rt::ExportSourceDesc &source,
                               const std::map<std::string, std::vector<float>> &params,
                               const std::string &path) {
  if (source.format != "onnx")
    return "the plan's source model is " + source.format + ", not ONNX";
  OnnxFile file;
  if (!file.model.ParseFromString(source.model))
    return "the plan's source model is not a readable ONNX model";
  std::vector<ParamOrigin> origins;
  for (const rt::ExportParamDesc &d : source.params) {
    ParamOrigin o;
    o.param = d.param;
    o.onnxName = d.value;
    o.isInitializer = d.isInitializer;
    o.rewire.assign(d.rewire.begin(), d.rewire.end());
    o.layout.kind = static_cast<WeightLayout::Kind>(d.layout);
    o.layout.onnxDims = d.dims;
    o.layout.flattenedChw = d.flattenedChw;
    origins.push_back(std::move(o));
  }
  onnx::ModelProto model;
  if (std::string problem = withTrainedWeights(file, origins, params, model); !problem.empty())
    return problem;
  return writeOnnxFile(path, model);
}

} // namespace dp::onnx_import
