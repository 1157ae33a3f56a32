// Reading .vtu/.vtp/.vtk through VTK itself where it is compiled in: VTK's readers handle every
// encoding VTK writes (lz4/lzma compression, base64 appended data, legacy variants).
#ifdef ELASTOBENCH_HAVE_VTK
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkDataSetReader.h>
#include <vtkExecutive.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkOutputWindow.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cmath>

#include "meshes/errors.h"
#include "meshes/formats.h"
#include "meshes/vtk_io.h"

namespace eb::mesh::formats {
namespace {

// Collects VTK error events instead of letting VTK print them and carry on.
class ErrorCollector : public vtkCommand {
 public:
  static ErrorCollector* New() { return new ErrorCollector; }
  void Execute(vtkObject*, unsigned long, void* data) override {
    if (message.empty() && data) message = static_cast<const char*>(data);
    failed = true;
  }
  bool failed = false;
  std::string message;
};

// VTK prints parser errors of its helper objects straight to the terminal; while we read,
// they are silenced (the reader's own errors still reach ErrorCollector).
class QuietVtk {
 public:
  QuietVtk() : mode_(vtkOutputWindow::GetInstance()->GetDisplayMode()) {
    vtkOutputWindow::GetInstance()->SetDisplayModeToNever();
  }
  ~QuietVtk() { vtkOutputWindow::GetInstance()->SetDisplayMode(mode_); }

 private:
  int mode_;
};

}  // namespace

MeshFile read_with_vtk(const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::string ext = lowercase_extension(path);
  const QuietVtk quiet;
  vtkNew<ErrorCollector> errors;
  vtkSmartPointer<vtkPointSet> data;
  // XML readers report errors through the reader and through its executive.
  const auto read_xml = [&](auto* reader) -> vtkPointSet* {
    reader->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, errors);
    reader->SetFileName(name.c_str());
    reader->Update();
    return reader->GetOutput();
  };
  vtkNew<vtkXMLUnstructuredGridReader> vtu_reader;
  vtkNew<vtkXMLPolyDataReader> vtp_reader;
  if (ext == ".vtu") {
    data = read_xml(vtu_reader.Get());
  } else if (ext == ".vtp") {
    data = read_xml(vtp_reader.Get());
  } else {
    vtkNew<vtkDataSetReader> r;
    r->AddObserver(vtkCommand::ErrorEvent, errors);
    r->SetFileName(name.c_str());
    r->Update();
    data = vtkPointSet::SafeDownCast(r->GetOutput());
    if (!errors->failed && !data)
      throw InputError(name + ": legacy VTK dataset is not an unstructured grid or polydata");
  }
  if (errors->failed || !data)
    throw InputError(name + ": VTK could not read the file" + (errors->message.empty() ? "" : ": " + errors->message));
  MeshFile m;
  const vtkIdType np = data->GetNumberOfPoints();
  m.nodes.resize(size_t(np));
  for (vtkIdType i = 0; i < np; ++i) {
    double p[3];
    data->GetPoint(i, p);
    for (int d = 0; d < 3; ++d)
      if (!std::isfinite(p[d])) throw InputError(name + ": point " + std::to_string(i) + " has a non-finite coordinate");
    m.nodes[size_t(i)] = {p[0], p[1], p[2]};
  }
  vtkDataArray* material = nullptr;
  for (const char* region : kRegionArrayNames)
    if (!material) material = data->GetCellData()->GetArray(region);
  TextReader where(name, "");
  vtkNew<vtkIdList> ids;
  std::vector<int64_t> buf;
  for (vtkIdType c = 0; c < data->GetNumberOfCells(); ++c) {
    data->GetCellPoints(c, ids);
    buf.assign(ids->begin(), ids->end());
    const int type = data->GetCellType(c);
    const int32_t mat = material ? int32_t(std::lround(material->GetTuple1(c))) : 0;
    add_vtk_cell(m, type == VTK_POLYGON && buf.size() == 3 ? 5 : type, buf.data(), buf.size(), mat, where);
  }
  return m;
}

}  // namespace eb::mesh::formats
#endif
