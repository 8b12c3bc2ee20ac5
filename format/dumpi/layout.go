package dumpi

// layouts is the argument layout of every DUMPI call label, indexed by the
// label (sst-dumpi's dumpi_function enumeration). Each entry is the name
// dumpi2ascii prints and the fields in wire order, "name:type" separated by
// spaces. Types:
//
//	i32 u16 u8 i64      big-endian integers (requests, ranks, tags and counts
//	                    are i32; communicators, datatypes, groups, infos,
//	                    files, windows and keyvals u16; ops and enums u8)
//	i32[] u16[] u8[]    i32 element count, then the elements
//	i32[][]             i32 row count, then each row as an i32[]
//	str                 i32 length, then the bytes
//	str[] str[][]       i32 count, then each element
//	str*                as many str as the preceding field says (argv)
//	argc                i32, followed by a second copy before DUMPI 0.6.2
//	status              statuses, present only if the record's mask stores
//	                    them: i32 count, then per status i32 bytes, i32
//	                    source, u8 cancelled, u8 error and, since 0.6.3,
//	                    i32 tag
//
// A "!root" suffix marks a field written only when the call's first field
// (commrank or oldcommrank) equals its root field. An "@0MN" suffix on an
// array marks a field that versions before 0.M.N wrote as a single i32.
// "-" marks labels that are never written (sentinels).
//
// The table was checked field by field against sst-dumpi's readers
// (dumpi/common/dumpiio.c) and against ../shared/formats/dumpi-record-table.txt;
// TestLayoutsMatchRecordTable lists where that table is wrong.
var layouts = [...]struct{ name, fields string }{
	{"MPI_Send", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"},                                                                                // 0
	{"MPI_Recv", "count:i32 datatype:u16 source:i32 tag:i32 comm:u16 status:status"},                                                                // 1
	{"MPI_Get_count", "status:status datatype:u16 count:i32"},                                                                                       // 2
	{"MPI_Bsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"},                                                                               // 3
	{"MPI_Ssend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"},                                                                               // 4
	{"MPI_Rsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"},                                                                               // 5
	{"MPI_Buffer_attach", "size:i32"},                                                                                                               // 6
	{"MPI_Buffer_detach", "size:i32"},                                                                                                               // 7
	{"MPI_Isend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                                   // 8
	{"MPI_Ibsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                                  // 9
	{"MPI_Issend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                                  // 10
	{"MPI_Irsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                                  // 11
	{"MPI_Irecv", "count:i32 datatype:u16 source:i32 tag:i32 comm:u16 request:i32"},                                                                 // 12
	{"MPI_Wait", "request:i32 status:status"},                                                                                                       // 13
	{"MPI_Test", "request:i32 flag:i32 status:status"},                                                                                              // 14
	{"MPI_Request_free", "request:i32"},                                                                                                             // 15
	{"MPI_Waitany", "count:i32 requests:i32[] index:i32 status:status"},                                                                             // 16
	{"MPI_Testany", "count:i32 requests:i32[] index:i32 flag:i32 status:status"},                                                                    // 17
	{"MPI_Waitall", "count:i32 requests:i32[] statuses:status"},                                                                                     // 18
	{"MPI_Testall", "count:i32 requests:i32[] flag:i32 statuses:status"},                                                                            // 19
	{"MPI_Waitsome", "count:i32 requests:i32[] outcount:i32 indices:i32[] statuses:status"},                                                         // 20
	{"MPI_Testsome", "count:i32 requests:i32[] outcount:i32 indices:i32[] statuses:status"},                                                         // 21
	{"MPI_Iprobe", "source:i32 tag:i32 comm:u16 flag:i32 status:status"},                                                                            // 22
	{"MPI_Probe", "source:i32 tag:i32 comm:u16 status:status"},                                                                                      // 23
	{"MPI_Cancel", "request:i32"},                                                                                                                   // 24
	{"MPI_Test_cancelled", "status:status cancelled:i32"},                                                                                           // 25
	{"MPI_Send_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                               // 26
	{"MPI_Bsend_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                              // 27
	{"MPI_Ssend_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                              // 28
	{"MPI_Rsend_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"},                                                              // 29
	{"MPI_Recv_init", "count:i32 datatype:u16 source:i32 tag:i32 comm:u16 request:i32"},                                                             // 30
	{"MPI_Start", "request:i32"},                                                                                                                    // 31
	{"MPI_Startall", "count:i32 requests:i32[]"},                                                                                                    // 32
	{"MPI_Sendrecv", "sendcount:i32 sendtype:u16 dest:i32 sendtag:i32 recvcount:i32 recvtype:u16 source:i32 recvtag:i32 comm:u16 status:status"},    // 33
	{"MPI_Sendrecv_replace", "count:i32 datatype:u16 dest:i32 sendtag:i32 source:i32 recvtag:i32 comm:u16 status:status"},                           // 34
	{"MPI_Type_contiguous", "count:i32 oldtype:u16 newtype:u16"},                                                                                    // 35
	{"MPI_Type_vector", "count:i32 blocklength:i32 stride:i32 oldtype:u16 newtype:u16"},                                                             // 36
	{"MPI_Type_hvector", "count:i32 blocklength:i32 stride:i32 oldtype:u16 newtype:u16"},                                                            // 37
	{"MPI_Type_indexed", "count:i32 lengths:i32[] indices:i32[] oldtype:u16 newtype:u16"},                                                           // 38
	{"MPI_Type_hindexed", "count:i32 lengths:i32[] indices:i32[] oldtype:u16 newtype:u16"},                                                          // 39
	{"MPI_Type_struct", "count:i32 lengths:i32[] indices:i32[]@069 oldtypes:u16[] newtype:u16"},                                                     // 40
	{"MPI_Address", "address:i32"},                                                                                                                  // 41
	{"MPI_Type_extent", "datatype:u16 extent:i32"},                                                                                                  // 42
	{"MPI_Type_size", "datatype:u16 size:i32"},                                                                                                      // 43
	{"MPI_Type_lb", "datatype:u16 lb:i32"},                                                                                                          // 44
	{"MPI_Type_ub", "datatype:u16 ub:i32"},                                                                                                          // 45
	{"MPI_Type_commit", "datatype:u16"},                                                                                                             // 46
	{"MPI_Type_free", "datatype:u16"},                                                                                                               // 47
	{"MPI_Get_elements", "status:status datatype:u16 elements:i32"},                                                                                 // 48
	{"MPI_Pack", "incount:i32 datatype:u16 outcount:i32 position:i32 position2:i32 comm:u16"},                                                       // 49
	{"MPI_Unpack", "incount:i32 position:i32 position2:i32 outcount:i32 datatype:u16 comm:u16"},                                                     // 50
	{"MPI_Pack_size", "incount:i32 datatype:u16 comm:u16 size:i32"},                                                                                 // 51
	{"MPI_Barrier", "comm:u16"},                                                                                                                     // 52
	{"MPI_Bcast", "count:i32 datatype:u16 root:i32 comm:u16"},                                                                                       // 53
	{"MPI_Gather", "commrank:i32 sendcount:i32 sendtype:u16 root:i32 comm:u16 recvcount:i32!root recvtype:u16!root"},                                // 54
	{"MPI_Gatherv", "commrank:i32 commsize:i32 sendcount:i32 sendtype:u16 root:i32 comm:u16 recvcounts:i32[]!root displs:i32[]!root recvtype:u16"},  // 55
	{"MPI_Scatter", "commrank:i32 recvcount:i32 recvtype:u16 root:i32 comm:u16 sendcount:i32!root sendtype:u16!root"},                               // 56
	{"MPI_Scatterv", "commrank:i32 commsize:i32 sendtype:u16 recvcount:i32 recvtype:u16 root:i32 comm:u16 sendcounts:i32[]!root displs:i32[]!root"}, // 57
	{"MPI_Allgather", "sendcount:i32 sendtype:u16 recvcount:i32 recvtype:u16 comm:u16"},                                                             // 58
	{"MPI_Allgatherv", "commsize:i32 sendcount:i32 sendtype:u16 recvcounts:i32[] displs:i32[] recvtype:u16 comm:u16"},                               // 59
	{"MPI_Alltoall", "sendcount:i32 sendtype:u16 recvcount:i32 recvtype:u16 comm:u16"},                                                              // 60
	{"MPI_Alltoallv", "commsize:i32 sendcounts:i32[] senddispls:i32[] sendtype:u16 recvcounts:i32[] recvdispls:i32[] recvtype:u16 comm:u16"},        // 61
	{"MPI_Reduce", "count:i32 datatype:u16 op:u8 root:i32 comm:u16"},                                                                                // 62
	{"MPI_Op_create", "commute:i32 op:u8"},                                                                                                          // 63
	{"MPI_Op_free", "op:u8"},                                                                                                                        // 64
	{"MPI_Allreduce", "count:i32 datatype:u16 op:u8 comm:u16"},                                                                                      // 65
	{"MPI_Reduce_scatter", "commsize:i32 recvcounts:i32[] datatype:u16 op:u8 comm:u16"},                                                             // 66
	{"MPI_Scan", "count:i32 datatype:u16 op:u8 comm:u16"},                                                                                           // 67
	{"MPI_Group_size", "group:u16 size:i32"},                                                                                                        // 68
	{"MPI_Group_rank", "group:u16 rank:i32"},                                                                                                        // 69
	{"MPI_Group_translate_ranks", "group1:u16 count:i32 ranks1:i32[] group2:u16 ranks2:i32[]"},                                                      // 70
	{"MPI_Group_compare", "group1:u16 group2:u16 result:u8"},                                                                                        // 71
	{"MPI_Comm_group", "comm:u16 group:u16"},                                                                                                        // 72
	{"MPI_Group_union", "group1:u16 group2:u16 newgroup:u16"},                                                                                       // 73
	{"MPI_Group_intersection", "group1:u16 group2:u16 newgroup:u16"},                                                                                // 74
	{"MPI_Group_difference", "group1:u16 group2:u16 newgroup:u16"},                                                                                  // 75
	{"MPI_Group_incl", "group:u16 count:i32 ranks:i32[] newgroup:u16"},                                                                              // 76
	{"MPI_Group_excl", "group:u16 count:i32 ranks:i32[] newgroup:u16"},                                                                              // 77
	{"MPI_Group_range_incl", "group:u16 count:i32 ranges:i32[][] newgroup:u16"},                                                                     // 78
	{"MPI_Group_range_excl", "group:u16 count:i32 ranges:i32[][] newgroup:u16"},                                                                     // 79
	{"MPI_Group_free", "group:u16"},                                                                                                                 // 80
	{"MPI_Comm_size", "comm:u16 size:i32"},                                                                                                          // 81
	{"MPI_Comm_rank", "comm:u16 rank:i32"},                                                                                                          // 82
	{"MPI_Comm_compare", "comm1:u16 comm2:u16 result:u8"},                                                                                           // 83
	{"MPI_Comm_dup", "oldcomm:u16 newcomm:u16"},                                                                                                     // 84
	{"MPI_Comm_create", "oldcomm:u16 group:u16 newcomm:u16"},                                                                                        // 85
	{"MPI_Comm_split", "oldcomm:u16 color:i32 key:i32 newcomm:u16"},                                                                                 // 86
	{"MPI_Comm_free", "comm:u16"},                                                                                                                   // 87
	{"MPI_Comm_test_inter", "comm:u16 inter:i32"},                                                                                                   // 88
	{"MPI_Comm_remote_size", "comm:u16 size:i32"},                                                                                                   // 89
	{"MPI_Comm_remote_group", "comm:u16 group:u16"},                                                                                                 // 90
	{"MPI_Intercomm_create", "localcomm:u16 localleader:i32 remotecomm:u16 remoteleader:i32 tag:i32 newcomm:u16"},                                   // 91
	{"MPI_Intercomm_merge", "comm:u16 high:i32 newcomm:u16"},                                                                                        // 92
	{"MPI_Keyval_create", "key:u16"},                                                                                                                // 93
	{"MPI_Keyval_free", "key:u16"},                                                                                                                  // 94
	{"MPI_Attr_put", "comm:u16 key:i32"},                                                                                                            // 95
	{"MPI_Attr_get", "comm:u16 key:i32 flag:i32"},                                                                                                   // 96
	{"MPI_Attr_delete", "comm:u16 key:i32"},                                                                                                         // 97
	{"MPI_Topo_test", "comm:u16 topo:u8"},                                                                                                           // 98
	{"MPI_Cart_create", "oldcomm:u16 ndim:i32 dims:i32[] periods:i32[] reorder:i32 newcomm:u16"},                                                    // 99
	{"MPI_Dims_create", "nodes:i32 ndim:i32 dims:i32[] dims2:i32[]"},                                                                                // 100
	{"MPI_Graph_create", "numedges:i32 oldcomm:u16 nodes:i32 index:i32[] edges:i32[] reorder:i32 newcomm:u16"},                                      // 101
	{"MPI_Graphdims_get", "comm:u16 nodes:i32 edges:i32"},                                                                                           // 102
	{"MPI_Graph_get", "totedges:i32 totnodes:i32 comm:u16 maxindex:i32 maxedges:i32 index:i32[] edges:i32[]"},                                       // 103
	{"MPI_Cartdim_get", "comm:u16 ndim:i32"},                                                                                                        // 104
	{"MPI_Cart_get", "ndim:i32 comm:u16 maxdims:i32 dims:i32[] periods:i32[] coords:i32[]@068"},                                                     // 105
	{"MPI_Cart_rank", "ndim:i32 comm:u16 coords:i32[] rank:i32"},                                                                                    // 106
	{"MPI_Cart_coords", "ndim:i32 comm:u16 rank:i32 maxdims:i32 coords:i32[]"},                                                                      // 107
	{"MPI_Graph_neighbors_count", "comm:u16 rank:i32 nneigh:i32"},                                                                                   // 108
	{"MPI_Graph_neighbors", "nneigh:i32 comm:u16 rank:i32 maxneighbors:i32 neighbors:i32[]"},                                                        // 109
	{"MPI_Cart_shift", "comm:u16 direction:i32 displ:i32 source:i32 dest:i32"},                                                                      // 110
	{"MPI_Cart_sub", "ndim:i32 oldcomm:u16 remain_dims:i32[] newcomm:u16"},                                                                          // 111
	{"MPI_Cart_map", "comm:u16 ndim:i32 dims:i32[] period:i32[] newrank:i32"},                                                                       // 112
	{"MPI_Graph_map", "numedges:i32 comm:u16 nodes:i32 index:i32[] edges:i32[] newrank:i32"},                                                        // 113
	{"MPI_Get_processor_name", "name:str resultlen:i32"},                                                                                            // 114
	{"MPI_Get_version", "version:i32 subversion:i32"},                                                                                               // 115
	{"MPI_Errhandler_create", "errhandler:u16"},                                                                                                     // 116
	{"MPI_Errhandler_set", "comm:u16 errhandler:u16"},                                                                                               // 117
	{"MPI_Errhandler_get", "comm:u16 errhandler:u16"},                                                                                               // 118
	{"MPI_Errhandler_free", "errhandler:u16"},                                                                                                       // 119
	{"MPI_Error_string", "errorcode:i32 errorstring:str resultlen:i32"},                                                                             // 120
	{"MPI_Error_class", "errorcode:i32 errorclass:i32"},                                                                                             // 121
	{"MPI_Wtime", ""},                       // 122
	{"MPI_Wtick", ""},                       // 123
	{"MPI_Init", "argc:argc argv:str*"},     // 124
	{"MPI_Finalize", ""},                    // 125
	{"MPI_Initialized", "result:i32"},       // 126
	{"MPI_Abort", "comm:u16 errorcode:i32"}, // 127
	{"MPI_Pcontrol", "-"},                   // 128
	{"MPI_Close_port", "portname:str"},      // 129
	{"MPI_Comm_accept", "portname:str info:u16 root:i32 oldcomm:u16 newcomm:u16"},  // 130
	{"MPI_Comm_connect", "portname:str info:u16 root:i32 oldcomm:u16 newcomm:u16"}, // 131
	{"MPI_Comm_disconnect", "comm:u16"},                                            // 132
	{"MPI_Comm_get_parent", "parent:u16"},                                          // 133
	{"MPI_Comm_join", "fd:i32 comm:u16"},                                           // 134
	{"MPI_Comm_spawn", "oldcommrank:i32 root:i32 oldcomm:u16 newcomm:u16 command:str!root argv:str[]!root maxprocs:i32!root info:u16!root errcodes:i32[]!root"},                                                // 135
	{"MPI_Comm_spawn_multiple", "totprocs:i32 oldcommrank:i32 root:i32 oldcomm:u16 newcomm:u16 count:i32!root commands:str[]!root argvs:str[][]!root maxprocs:i32[]!root info:u16[]!root errcodes:i32[]!root"}, // 136
	{"MPI_Lookup_name", "servicename:str info:u16 portname:str"},                                                                    // 137
	{"MPI_Open_port", "info:u16 portname:str"},                                                                                      // 138
	{"MPI_Publish_name", "servicename:str info:u16 portname:str"},                                                                   // 139
	{"MPI_Unpublish_name", "servicename:str info:u16 portname:str"},                                                                 // 140
	{"MPI_Accumulate", "origincount:i32 origintype:u16 targetrank:i32 targetdisp:i32 targetcount:i32 targettype:u16 op:u8 win:u16"}, // 141
	{"MPI_Get", "origincount:i32 origintype:u16 targetrank:i32 targetdisp:i32 targetcount:i32 targettype:u16 win:u16"},              // 142
	{"MPI_Put", "origincount:i32 origintype:u16 targetrank:i32 targetdisp:i32 targetcount:i32 targettype:u16 win:u16"},              // 143
	{"MPI_Win_complete", "win:u16"},                                                                                                 // 144
	{"MPI_Win_create", "size:i32 dispunit:i32 info:u16 comm:u16 win:u16"},                                                           // 145
	{"MPI_Win_fence", "assertion:u8 win:u16"},                                                                                       // 146
	{"MPI_Win_free", "win:u16"},                                                                                                     // 147
	{"MPI_Win_get_group", "win:u16 group:u16"},                                                                                      // 148
	{"MPI_Win_lock", "locktype:u8 winrank:i32 assertion:u8 win:u16"},                                                                // 149
	{"MPI_Win_post", "group:u16 assertion:u8 win:u16"},                                                                              // 150
	{"MPI_Win_start", "group:u16 assertion:u8 win:u16"},                                                                             // 151
	{"MPI_Win_test", "win:u16 flag:i32"},                                                                                            // 152
	{"MPI_Win_unlock", "winrank:i32 win:u16"},                                                                                       // 153
	{"MPI_Win_wait", "win:u16"},                                                                                                     // 154
	{"MPI_Alltoallw", "commsize:i32 sendcounts:i32[] senddispls:i32[] sendtypes:u16[] recvcounts:i32[] recvdispls:i32[] recvtypes:u16[] comm:u16"}, // 155
	{"MPI_Exscan", "count:i32 datatype:u16 op:u8 comm:u16"},             // 156
	{"MPI_Add_error_class", "errorclass:i32"},                           // 157
	{"MPI_Add_error_code", "errorclass:i32 errorcode:i32"},              // 158
	{"MPI_Add_error_string", "errorcode:i32 errorstring:str"},           // 159
	{"MPI_Comm_call_errhandler", "comm:u16 errorcode:i32"},              // 160
	{"MPI_Comm_create_keyval", "keyval:u16"},                            // 161
	{"MPI_Comm_delete_attr", "comm:u16 keyval:u16"},                     // 162
	{"MPI_Comm_free_keyval", "keyval:u16"},                              // 163
	{"MPI_Comm_get_attr", "comm:u16 keyval:u16 flag:i32"},               // 164
	{"MPI_Comm_get_name", "comm:u16 name:str resultlen:i32"},            // 165
	{"MPI_Comm_set_attr", "comm:u16 keyval:u16"},                        // 166
	{"MPI_Comm_set_name", "comm:u16 name:str"},                          // 167
	{"MPI_File_call_errhandler", "file:u16 errorcode:i32"},              // 168
	{"MPI_Grequest_complete", "request:i32"},                            // 169
	{"MPI_Grequest_start", "request:i32"},                               // 170
	{"MPI_Init_thread", "argc:i32 argv:str* required:u8 provided:u8"},   // 171
	{"MPI_Is_thread_main", "flag:i32"},                                  // 172
	{"MPI_Query_thread", "supported:u8"},                                // 173
	{"MPI_Status_set_cancelled", "status:status flag:i32"},              // 174
	{"MPI_Status_set_elements", "status:status datatype:u16 count:i32"}, // 175
	{"MPI_Type_create_keyval", "keyval:u16"},                            // 176
	{"MPI_Type_delete_attr", "datatype:u16 keyval:u16"},                 // 177
	{"MPI_Type_dup", "oldtype:u16 newtype:u16"},                         // 178
	{"MPI_Type_free_keyval", "keyval:u16"},                              // 179
	{"MPI_Type_get_attr", "datatype:u16 keyval:u16 flag:i32"},           // 180
	{"MPI_Type_get_contents", "numdatatypes:i32 numaddresses:i32 numintegers:i32 datatype:u16 maxintegers:i32 maxaddresses:i32 maxdatatypes:i32 arrintegers:i32[] arraddresses:i32[] arrdatatypes:u16[]"}, // 181
	{"MPI_Type_get_envelope", "datatype:u16 numintegers:i32 numaddresses:i32 numdatatypes:i32 combiner:u8"},                                                                                               // 182
	{"MPI_Type_get_name", "datatype:u16 name:str resultlen:i32"},                                                                                                                                          // 183
	{"MPI_Type_set_attr", "datatype:u16 keyval:u16"},                                                                                                                                                      // 184
	{"MPI_Type_set_name", "datatype:u16 name:str"},                                                                                                                                                        // 185
	{"MPI_Type_match_size", "typeclass:u8 size:i32 datatype:u16"},                                                                                                                                         // 186
	{"MPI_Win_call_errhandler", "win:u16 errorcode:i32"},                                                                                                                                                  // 187
	{"MPI_Win_create_keyval", "keyval:u16"},                                                                                                                                                               // 188
	{"MPI_Win_delete_attr", "win:u16 keyval:u16"},                                                                                                                                                         // 189
	{"MPI_Win_free_keyval", "keyval:u16"},                                                                                                                                                                 // 190
	{"MPI_Win_get_attr", "win:u16 keyval:u16 flag:i32"},                                                                                                                                                   // 191
	{"MPI_Win_get_name", "win:u16 name:str resultlen:i32"},                                                                                                                                                // 192
	{"MPI_Win_set_attr", "win:u16 keyval:u16"},                                                                                                                                                            // 193
	{"MPI_Win_set_name", "win:u16 name:str"},                                                                                                                                                              // 194
	{"MPI_Alloc_mem", "size:i32 info:u16"},                                                                                                                                                                // 195
	{"MPI_Comm_create_errhandler", "errhandler:u16"},                                                                                                                                                      // 196
	{"MPI_Comm_get_errhandler", "comm:u16 errhandler:u16"},                                                                                                                                                // 197
	{"MPI_Comm_set_errhandler", "comm:u16 errhandler:u16"},                                                                                                                                                // 198
	{"MPI_File_create_errhandler", "errhandler:u16"},                                                                                                                                                      // 199
	{"MPI_File_get_errhandler", "file:u16 errhandler:u16"},                                                                                                                                                // 200
	{"MPI_File_set_errhandler", "file:u16 errhandler:u16"},                                                                                                                                                // 201
	{"MPI_Finalized", "flag:i32"},                                                                                                                                                                         // 202
	{"MPI_Free_mem", ""},                                                                                                                                                                                  // 203
	{"MPI_Get_address", "address:i32"},                                                                                                                                                                    // 204
	{"MPI_Info_create", "info:u16"},                                                                                                                                                                       // 205
	{"MPI_Info_delete", "info:u16 key:str"},                                                                                                                                                               // 206
	{"MPI_Info_dup", "oldinfo:u16 newinfo:u16"},                                                                                                                                                           // 207
	{"MPI_Info_free", "info:u16"},                                                                                                                                                                         // 208
	{"MPI_Info_get", "info:u16 key:str valuelength:i32 value:str flag:i32"},                                                                                                                               // 209
	{"MPI_Info_get_nkeys", "info:u16 nkeys:i32"},                                                                                                                                                          // 210
	{"MPI_Info_get_nthkey", "info:u16 n:i32 key:str"},                                                                                                                                                     // 211
	{"MPI_Info_get_valuelen", "info:u16 key:str valuelen:i32 flag:i32"},                                                                                                                                   // 212
	{"MPI_Info_set", "info:u16 key:str value:str"},                                                                                                                                                        // 213
	{"MPI_Pack_external", "datarep:str incount:i32 intype:u16 outcount:i32 position:i32 position2:i32"},                                                                                                   // 214
	{"MPI_Pack_external_size", "datarep:str incount:i32 datatype:u16 size:i32"},                                                                                                                           // 215
	{"MPI_Request_get_status", "request:i32 flag:i32 status:status"},                                                                                                                                      // 216
	{"MPI_Type_create_darray", "size:i32 rank:i32 ndims:i32 gsizes:i32[] distribs:u8[] dargs:i32[] psizes:i32[] order:u8 oldtype:u16 newtype:u16"}, // 217
	{"MPI_Type_create_hindexed", "count:i32 blocklengths:i32[] displacements:i32[] oldtype:u16 newtype:u16"},                                       // 218
	{"MPI_Type_create_hvector", "count:i32 blocklength:i32 stride:i32 oldtype:u16 newtype:u16"},                                                    // 219
	{"MPI_Type_create_indexed_block", "count:i32 blocklength:i32 displacments:i32[] oldtype:u16 newtype:u16"},                                      // 220
	{"MPI_Type_create_resized", "oldtype:u16 lb:i32 extent:i32 newtype:u16"},                                                                       // 221
	{"MPI_Type_create_struct", "count:i32 blocklengths:i32[] displacements:i32[] oldtypes:u16[] newtype:u16"},                                      // 222
	{"MPI_Type_create_subarray", "ndims:i32 sizes:i32[] subsizes:i32[] starts:i32[] order:u8 oldtype:u16 newtype:u16"},                             // 223
	{"MPI_Type_get_extent", "datatype:u16 lb:i32 extent:i32"},                                                                                      // 224
	{"MPI_Type_get_true_extent", "datatype:u16 lb:i32 extent:i32"},                                                                                 // 225
	{"MPI_Unpack_external", "datarep:str insize:i32 position:i32 position2:i32 outcount:i32 datatype:u16"},                                         // 226
	{"MPI_Win_create_errhandler", "errhandler:u16"},                                                                                                // 227
	{"MPI_Win_get_errhandler", "win:u16 errhandler:u16"},                                                                                           // 228
	{"MPI_Win_set_errhandler", "win:u16 errhandler:u16"},                                                                                           // 229
	{"MPI_File_open", "comm:u16 filename:str amode:u8 info:u16 file:u16"},                                                                          // 230
	{"MPI_File_close", "file:u16"},                                                              // 231
	{"MPI_File_delete", "filename:str info:u16"},                                                // 232
	{"MPI_File_set_size", "file:u16 size:i64"},                                                  // 233
	{"MPI_File_preallocate", "file:u16 size:i64"},                                               // 234
	{"MPI_File_get_size", "file:u16 size:i64"},                                                  // 235
	{"MPI_File_get_group", "file:u16 group:u16"},                                                // 236
	{"MPI_File_get_amode", "file:u16 amode:u8"},                                                 // 237
	{"MPI_File_set_info", "file:u16 info:u16"},                                                  // 238
	{"MPI_File_get_info", "file:u16 info:u16"},                                                  // 239
	{"MPI_File_set_view", "file:u16 offset:i64 hosttype:u16 filetype:u16 datarep:str info:u16"}, // 240
	{"MPI_File_get_view", "file:u16 offset:i64 hosttype:u16 filetype:u16 datarep:str"},          // 241
	{"MPI_File_read_at", "file:u16 offset:i64 count:i32 datatype:u16 status:status"},            // 242
	{"MPI_File_read_at_all", "file:u16 offset:i64 count:i32 datatype:u16 status:status"},        // 243
	{"MPI_File_write_at", "file:u16 offset:i64 count:i32 datatype:u16 status:status"},           // 244
	{"MPI_File_write_at_all", "file:u16 offset:i64 count:i32 datatype:u16 status:status"},       // 245
	{"MPI_File_iread_at", "file:u16 offset:i64 count:i32 datatype:u16 request:i32"},             // 246
	{"MPI_File_iwrite_at", "file:u16 offset:i64 count:i32 datatype:u16 request:i32"},            // 247
	{"MPI_File_read", "file:u16 count:i32 datatype:u16 status:status"},                          // 248
	{"MPI_File_read_all", "file:u16 count:i32 datatype:u16 status:status"},                      // 249
	{"MPI_File_write", "file:u16 count:i32 datatype:u16 status:status"},                         // 250
	{"MPI_File_write_all", "file:u16 count:i32 datatype:u16 status:status"},                     // 251
	{"MPI_File_iread", "file:u16 count:i32 datatype:u16 request:i32"},                           // 252
	{"MPI_File_iwrite", "file:u16 count:i32 datatype:u16 request:i32"},                          // 253
	{"MPI_File_seek", "file:u16 offset:i64 whence:u8"},                                          // 254
	{"MPI_File_get_position", "file:u16 offset:i64"},                                            // 255
	{"MPI_File_get_byte_offset", "file:u16 offset:i64 bytes:i64"},                               // 256
	{"MPI_File_read_shared", "file:u16 count:i32 datatype:u16 status:status"},                   // 257
	{"MPI_File_write_shared", "file:u16 count:i32 datatype:u16 status:status"},                  // 258
	{"MPI_File_iread_shared", "file:u16 count:i32 datatype:u16 request:i32"},                    // 259
	{"MPI_File_iwrite_shared", "file:u16 count:i32 datatype:u16 request:i32"},                   // 260
	{"MPI_File_read_ordered", "file:u16 count:i32 datatype:u16 status:status"},                  // 261
	{"MPI_File_write_ordered", "file:u16 count:i32 datatype:u16 status:status"},                 // 262
	{"MPI_File_seek_shared", "file:u16 offset:i64 whence:u8"},                                   // 263
	{"MPI_File_get_position_shared", "file:u16 offset:i64"},                                     // 264
	{"MPI_File_read_at_all_begin", "file:u16 offset:i64 count:i32 datatype:u16"},                // 265
	{"MPI_File_read_at_all_end", "file:u16 status:status"},                                      // 266
	{"MPI_File_write_at_all_begin", "file:u16 offset:i64 count:i32 datatype:u16"},               // 267
	{"MPI_File_write_at_all_end", "file:u16 status:status"},                                     // 268
	{"MPI_File_read_all_begin", "file:u16 count:i32 datatype:u16"},                              // 269
	{"MPI_File_read_all_end", "file:u16 status:status"},                                         // 270
	{"MPI_File_write_all_begin", "file:u16 count:i32 datatype:u16"},                             // 271
	{"MPI_File_write_all_end", "file:u16 status:status"},                                        // 272
	{"MPI_File_read_ordered_begin", "file:u16 count:i32 datatype:u16"},                          // 273
	{"MPI_File_read_ordered_end", "file:u16 status:status"},                                     // 274
	{"MPI_File_write_ordered_begin", "file:u16 count:i32 datatype:u16"},                         // 275
	{"MPI_File_write_ordered_end", "file:u16 status:status"},                                    // 276
	{"MPI_File_get_type_extent", "file:u16 datatype:u16 extent:i32"},                            // 277
	{"MPI_Register_datarep", "name:str"},                                                        // 278
	{"MPI_File_set_atomicity", "file:u16 flag:i32"},                                             // 279
	{"MPI_File_get_atomicity", "file:u16 flag:i32"},                                             // 280
	{"MPI_File_sync", "file:u16"},                                                               // 281
	{"MPIO_Test", "request:i32 flag:i32 status:status"},                                         // 282
	{"MPIO_Wait", "request:i32 status:status"},                                                  // 283
	{"MPIO_Testall", "count:i32 requests:i32[] flag:i32 statuses:status"},                       // 284
	{"MPIO_Waitall", "count:i32 requests:i32[] statuses:status"},                                // 285
	{"MPIO_Testany", "count:i32 requests:i32[] flag:i32 index:i32 statuses:status"},             // 286
	{"MPIO_Waitany", "count:i32 requests:i32[] index:i32 statuses:status"},                      // 287
	{"MPIO_Waitsome", "count:i32 requests:i32[] outcount:i32 indices:i32[] statuses:status"},    // 288
	{"MPIO_Testsome", "count:i32 requests:i32[] outcount:i32 indices:i32[] statuses:status"},    // 289
	{"MPI_ALL_FUNCTIONS", "-"},                                                                  // 290
	{"DUMPI_Function_enter", "fn:i64"},                                                          // 291
	{"DUMPI_Function_exit", "fn:i64"},                                                           // 292
	{"MPI_END_OF_STREAM", "-"},                                                                  // 293
}
