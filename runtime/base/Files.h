// Files as dp writes them: atomically, after checking up front that they can be written.
#pragma once

#include <string>

namespace dp::rt {

/// Replaces `path` with `content` atomically: writes a temporary file beside it, flushes it to
/// disk and renames it over `path`, so readers see the old file or the new one, never a part.
/// Throws Error(Runtime) naming the path on failure.
void writeFileAtomically(const std::string &path, const std::string &content);

/// Throws Error(Usage) if a file cannot be created at `path` (its directory is missing or not
/// writable), so a bad --metrics path fails before training rather than after.
void checkWritable(const std::string &path);

} // namespace dp::rt
