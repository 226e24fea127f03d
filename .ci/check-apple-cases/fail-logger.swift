// expect: os.Logger
import os

let log = Logger(subsystem: "RefreshQueue", category: "refresh")
