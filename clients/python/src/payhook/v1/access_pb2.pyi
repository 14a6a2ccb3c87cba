from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from typing import ClassVar as _ClassVar

ACCESS_DEVNET: Access
ACCESS_FIELD_NUMBER: _ClassVar[int]
ACCESS_OPERATOR: Access
ACCESS_PROJECT: Access
ACCESS_PUBLIC: Access
ACCESS_UNSPECIFIED: Access
DESCRIPTOR: _descriptor.FileDescriptor
SCOPE_CREATE: Scope
SCOPE_FIELD_NUMBER: _ClassVar[int]
SCOPE_MANAGEMENT: Scope
SCOPE_PAYOUTS: Scope
SCOPE_READ: Scope
SCOPE_UNSPECIFIED: Scope
access: _descriptor.FieldDescriptor
scope: _descriptor.FieldDescriptor

class Access(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Scope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
