"""Readers and writers of modal data (one module per format, see ``registry``)."""

from .registry import (
    FORMATS,
    check_writable,
    modal_formats,
    read_modal,
    register_format,
    write_modal,
)

__all__ = ["FORMATS", "check_writable", "modal_formats", "read_modal", "register_format",
           "write_modal"]
