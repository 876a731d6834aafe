CURRENT_PROGRESS:
  In Progress:
    - 修复单位转换 🚀
KEY_LEARNINGS:
  ADD:
    - 缓存按路径 because: no reason first
