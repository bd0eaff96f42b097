from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CatalogInfo(_message.Message):
    __slots__ = ("id", "name", "version", "vendor", "quote_date", "created_at", "row_count", "size_bytes", "ref")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VENDOR_FIELD_NUMBER: _ClassVar[int]
    QUOTE_DATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ROW_COUNT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    version: int
    vendor: str
    quote_date: str
    created_at: str
    row_count: int
    size_bytes: int
    ref: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[int] = ..., vendor: _Optional[str] = ..., quote_date: _Optional[str] = ..., created_at: _Optional[str] = ..., row_count: _Optional[int] = ..., size_bytes: _Optional[int] = ..., ref: _Optional[str] = ...) -> None: ...

class UploadCatalogRequest(_message.Message):
    __slots__ = ("request_id", "name", "file_name", "data")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    name: str
    file_name: str
    data: bytes
    def __init__(self, request_id: _Optional[str] = ..., name: _Optional[str] = ..., file_name: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class UploadCatalogResponse(_message.Message):
    __slots__ = ("catalog", "warnings")
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    catalog: CatalogInfo
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, catalog: _Optional[_Union[CatalogInfo, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class ListCatalogsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListCatalogsResponse(_message.Message):
    __slots__ = ("catalogs", "bundled", "next_page_token")
    CATALOGS_FIELD_NUMBER: _ClassVar[int]
    BUNDLED_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    catalogs: _containers.RepeatedCompositeFieldContainer[CatalogInfo]
    bundled: _containers.RepeatedScalarFieldContainer[str]
    next_page_token: str
    def __init__(self, catalogs: _Optional[_Iterable[_Union[CatalogInfo, _Mapping]]] = ..., bundled: _Optional[_Iterable[str]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class TableRow(_message.Message):
    __slots__ = ("cells",)
    CELLS_FIELD_NUMBER: _ClassVar[int]
    cells: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, cells: _Optional[_Iterable[str]] = ...) -> None: ...

class Table(_message.Message):
    __slots__ = ("name", "header", "rows")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HEADER_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    name: str
    header: _containers.RepeatedScalarFieldContainer[str]
    rows: _containers.RepeatedCompositeFieldContainer[TableRow]
    def __init__(self, name: _Optional[str] = ..., header: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[TableRow, _Mapping]]] = ...) -> None: ...

class GetCatalogRequest(_message.Message):
    __slots__ = ("ref", "include_tables")
    REF_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TABLES_FIELD_NUMBER: _ClassVar[int]
    ref: str
    include_tables: bool
    def __init__(self, ref: _Optional[str] = ..., include_tables: _Optional[bool] = ...) -> None: ...

class GetCatalogResponse(_message.Message):
    __slots__ = ("catalog", "tables")
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    catalog: CatalogInfo
    tables: _containers.RepeatedCompositeFieldContainer[Table]
    def __init__(self, catalog: _Optional[_Union[CatalogInfo, _Mapping]] = ..., tables: _Optional[_Iterable[_Union[Table, _Mapping]]] = ...) -> None: ...

class ExportCatalogRequest(_message.Message):
    __slots__ = ("ref", "format")
    REF_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ref: str
    format: str
    def __init__(self, ref: _Optional[str] = ..., format: _Optional[str] = ...) -> None: ...

class FileChunk(_message.Message):
    __slots__ = ("file_name", "data")
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    file_name: str
    data: bytes
    def __init__(self, file_name: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class DeleteCatalogRequest(_message.Message):
    __slots__ = ("ref", "all_versions")
    REF_FIELD_NUMBER: _ClassVar[int]
    ALL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    ref: str
    all_versions: bool
    def __init__(self, ref: _Optional[str] = ..., all_versions: _Optional[bool] = ...) -> None: ...

class DeleteCatalogResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: _containers.RepeatedCompositeFieldContainer[CatalogInfo]
    def __init__(self, deleted: _Optional[_Iterable[_Union[CatalogInfo, _Mapping]]] = ...) -> None: ...
