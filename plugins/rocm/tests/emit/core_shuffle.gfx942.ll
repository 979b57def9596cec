; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @shfl_modes(ptr addrspace(1) %p0) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 32}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r0
  %r1 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r1
  %v0 = mul i32 %tid, 10
  store i32 %v0, ptr addrspace(5) %r0
  %v1 = load i32, ptr addrspace(5) %r0
  %v2 = and i32 %lane, -8
  %v3 = add i32 %lane, 1
  %v4 = icmp sge i32 %v3, %v2
  %v5 = add i32 %v2, 8
  %v6 = icmp slt i32 %v3, %v5
  %v7 = and i1 %v4, %v6
  %v8 = select i1 %v7, i32 %v3, i32 %lane
  %v9 = shl i32 %v8, 2
  %v10 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v9, i32 %v1)
  store i32 %v10, ptr addrspace(5) %r1
  %v11 = load i32, ptr addrspace(5) %r1
  %v12 = sext i32 %tid to i64
  %v13 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v12
  store i32 %v11, ptr addrspace(1) %v13, align 4
  %v14 = load i32, ptr addrspace(5) %r0
  %v15 = and i32 %lane, -8
  %v16 = and i32 3, 7
  %v17 = add i32 %v15, %v16
  %v18 = shl i32 %v17, 2
  %v19 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v18, i32 %v14)
  store i32 %v19, ptr addrspace(5) %r1
  %v20 = load i32, ptr addrspace(5) %r1
  %v21 = add i32 32, %tid
  %v22 = sext i32 %v21 to i64
  %v23 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v22
  store i32 %v20, ptr addrspace(1) %v23, align 4
  %v24 = load i32, ptr addrspace(5) %r0
  %v25 = and i32 %lane, -32
  %v26 = sub i32 %lane, 2
  %v27 = icmp sge i32 %v26, %v25
  %v28 = add i32 %v25, 32
  %v29 = icmp slt i32 %v26, %v28
  %v30 = and i1 %v27, %v29
  %v31 = select i1 %v30, i32 %v26, i32 %lane
  %v32 = shl i32 %v31, 2
  %v33 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v32, i32 %v24)
  store i32 %v33, ptr addrspace(5) %r1
  %v34 = load i32, ptr addrspace(5) %r1
  %v35 = add i32 64, %tid
  %v36 = sext i32 %v35 to i64
  %v37 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v36
  store i32 %v34, ptr addrspace(1) %v37, align 4
  %v38 = load i32, ptr addrspace(5) %r0
  %v39 = and i32 %lane, -32
  %v40 = xor i32 %lane, 5
  %v41 = icmp sge i32 %v40, %v39
  %v42 = add i32 %v39, 32
  %v43 = icmp slt i32 %v40, %v42
  %v44 = and i1 %v41, %v43
  %v45 = select i1 %v44, i32 %v40, i32 %lane
  %v46 = shl i32 %v45, 2
  %v47 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v46, i32 %v38)
  store i32 %v47, ptr addrspace(5) %r1
  %v48 = load i32, ptr addrspace(5) %r1
  %v49 = add i32 96, %tid
  %v50 = sext i32 %v49 to i64
  %v51 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v50
  store i32 %v48, ptr addrspace(1) %v51, align 4
  ret void
}

define amdgpu_kernel void @shfl_inactive(ptr addrspace(1) %p0) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 32}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r0
  store i32 %tid, ptr addrspace(5) %r0
  %v0 = icmp slt i32 %lane, 16
  br i1 %v0, label %then0, label %endif1
then0:
  %v1 = load i32, ptr addrspace(5) %r0
  %v2 = and i32 %lane, -32
  %v3 = xor i32 %lane, 16
  %v4 = icmp sge i32 %v3, %v2
  %v5 = add i32 %v2, 32
  %v6 = icmp slt i32 %v3, %v5
  %v7 = and i1 %v4, %v6
  %v8 = select i1 %v7, i32 %v3, i32 %lane
  %v9 = shl i32 %v8, 2
  %v10 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v9, i32 %v1)
  store i32 %v10, ptr addrspace(5) %r0
  br label %endif1
endif1:
  %v11 = load i32, ptr addrspace(5) %r0
  %v12 = sext i32 %tid to i64
  %v13 = getelementptr inbounds i32, ptr addrspace(1) %p0, i64 %v12
  store i32 %v11, ptr addrspace(1) %v13, align 4
  ret void
}

declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="32,32" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { "amdgpu-flat-work-group-size"="32,32" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
